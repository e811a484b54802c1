package proxy

import (
	"net/netip"
	"time"

	phttp "github.com/simdedge/simdedge/parse/http"
	"github.com/simdedge/simdedge/server"
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
	// An upgrade request (Connection: upgrade) stays on goroutines;
	// Upgrade alone is an ordinary hop-by-hop field, removed on both
	// paths.
	if head.Body == phttp.BodyChunked || head.Expect100 || head.Upgrade != nil ||
		server.SpecialTarget(r) != nil || !forwardableTarget(head) {
		return nil
	}
	return p.loop
}

// loopUpstream is a Proxy as the server.LoopUpstream of an exchange the
// loop drives.
type loopUpstream struct{ p *Proxy }

func (l loopUpstream) LoopTarget() (any, netip.AddrPort) {
	t := l.p.up.pick()
	return t, t.ap
}

func (l loopUpstream) LoopTimeouts() (connect, header, idle time.Duration, maxIdle int) {
	o := &l.p.up.opts
	return o.ConnectTimeout, o.ResponseHeaderTimeout, o.IdleConnTimeout, o.MaxIdlePerTarget
}

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

func (l loopUpstream) Failed(w *server.ResponseWriter, key any, err error, dial bool) {
	t, _ := key.(*target)
	if t == nil {
		t = l.p.up.targets[0]
	}
	l.p.upstreamFailed(w, t, err, dial)
}

func (l loopUpstream) BodyFailed(w *server.ResponseWriter) { l.p.bodyFailed(w) }

// MayResend is the resend rule (replay.go); the loop's bodies are buffered.
func (l loopUpstream) MayResend(r *server.Request, written bool) bool {
	return mayResend(r.Head(), written, true)
}
