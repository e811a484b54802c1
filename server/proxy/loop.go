package proxy

import (
	"net/netip"
	"time"

	phttp "github.com/simdedge/simdedge/parse/http"
	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/upstream"
)

// LoopProxy implements server.LoopProxier: on the event-loop engine with
// server.Options.LoopProxy, requests with a buffered body go to the
// upstream from the loop itself, over non-blocking keep-alive connections
// the loop holds per target. The rewriting and the answers to failures are
// the same functions ServeEdge uses. It returns nil (the connection is
// handed to ServeEdge on a goroutine) for message targets, targets named
// by host name (the loop cannot resolve without blocking), the special
// targets and targets it cannot forward (ServeEdge answers them), and
// protocol upgrades.
func (p *Proxy) LoopProxy(r *server.Request) server.LoopUpstream {
	if !p.up.loopable {
		return nil
	}
	head := r.Head()
	// An upgrade request (Connection: upgrade) that is tunnelled or
	// refused goes to ServeEdge on goroutines (upgrade.go); one that is
	// ignored (h2c alone, HTTP/1.0) is forwarded here without the field,
	// as Upgrade alone always is: a hop-by-hop field, removed on both
	// paths.
	if head.Body == phttp.BodyChunked || head.Expect100 || head.Upgrade != nil && p.upgradeOf(head) != upgradeNone ||
		server.SpecialTarget(r) != nil || !forwardableTarget(head) {
		return nil
	}
	return p.loop
}

// loopUpstream is a Proxy as the server.LoopUpstream of an exchange the
// loop drives.
type loopUpstream struct{ p *Proxy }

// LoopTarget selects through the pool without blocking; under a
// connection cap the loop's waiter queues (ErrQueued).
func (l loopUpstream) LoopTarget(r *server.Request, rs *upstream.RetryState, w *upstream.Waiter) (*upstream.Target, netip.AddrPort, error) {
	pool := l.p.up.pool
	ut, err := pool.AcquireNext(pool.Key(r), rs, w)
	if err != nil {
		return nil, netip.AddrPort{}, err
	}
	r.SetUpstream(pool.Name(), ut.Address())
	return ut, targetOf(ut).ap, nil
}

func (l loopUpstream) LoopCancel(w *upstream.Waiter) { l.p.up.pool.Cancel(w) }

func (l loopUpstream) LoopDone(t *upstream.Target, res upstream.Result) { l.p.up.pool.Done(t, res) }

// LoopRetry is the policy's decision (Decide) with the loop's facts: its
// bodies are buffered, so always replayable.
func (l loopUpstream) LoopRetry(r *server.Request, rs *upstream.RetryState, t *upstream.Target, res upstream.Result, written bool) (upstream.Decision, time.Duration) {
	pool := l.p.up.pool
	head := r.Head()
	d := pool.Decide(rs, t, upstream.Facts{Result: res, Written: written,
		Idempotent: upstream.IdempotentMethod(head.Method), Replayable: true, IdempotencyKey: hasIdempotencyKey(head)})
	if d == upstream.Retry {
		return d, pool.Backoff(rs)
	}
	return d, 0
}

func (l loopUpstream) LoopFinish(rs *upstream.RetryState) { l.p.up.pool.Finish(rs) }

func (l loopUpstream) Unavailable(w *server.ResponseWriter, err error) {
	l.p.unavailable(w, l.p.up.pool, err)
}

func (l loopUpstream) LoopTimeouts() server.LoopTimeouts { return l.p.up.loopTO }

// AppendRequest is ServeEdge's forwarding of a buffered body: the
// rewritten head and the body, for one write.
func (l loopUpstream) AppendRequest(b []byte, w *server.ResponseWriter, r *server.Request) ([]byte, bool) {
	p := l.p
	head := r.Head()
	var body []byte
	if head.Body == phttp.BodyLength {
		bb, err := r.BodyBytes()
		if err != nil {
			p.respondError(w, server.StatusFor(err), "bad request body\n")
			w.SetClose()
			return b, false
		}
		body = bb
	}
	b = p.appendHead(b, r, head, head.Body, head.ContentLength)
	return append(b, body...), true
}

func (l loopUpstream) ParseResponseHead(b []byte, resp *phttp.Response, isHead bool) (int, error) {
	return l.p.parseHead(b, resp, isHead)
}

func (l loopUpstream) WriteResponseHead(w *server.ResponseWriter, resp *phttp.Response, scratch []byte, isHead bool) []byte {
	return l.p.writeResponseHead(w, resp, scratch, isHead)
}

func (l loopUpstream) Failed(w *server.ResponseWriter, ut *upstream.Target, err error, dial bool) {
	t := l.p.up.targets[0]
	if ut != nil {
		t = targetOf(ut)
	}
	l.p.upstreamFailed(w, t, err, dial)
}

func (l loopUpstream) BodyFailed(w *server.ResponseWriter) { l.p.bodyFailed(w) }

// MayResend is the resend rule (replay.go); the loop's bodies are buffered.
func (l loopUpstream) MayResend(r *server.Request, written bool) bool {
	return mayResend(r.Head(), written, true)
}
