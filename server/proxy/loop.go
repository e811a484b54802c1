package proxy

import (
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

// LoopBegin starts the driver of an exchange the loop drives; the loop's
// bodies are buffered (held), so it may resend them.
func (l loopUpstream) LoopBegin(a *upstream.Attempt, r *server.Request, w *upstream.Waiter, now time.Duration) {
	pool := l.p.up.pool
	head := r.Head()
	a.Begin(pool, pool.Key(r), upstream.IdempotentMethod(head.Method), hasIdempotencyKey(head), w, now)
}

func (l loopUpstream) Answer(w *server.ResponseWriter, a *upstream.Attempt) { l.p.answer(w, a) }

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

func (l loopUpstream) BodyFailed(w *server.ResponseWriter) { l.p.bodyFailed(w) }
