package proxy

import (
	"errors"
	"strconv"
	"time"

	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/upstream"
)

// The proxy's side of the upstream policy (server/upstream): turning what
// an attempt did into a failure kind for the attempt driver
// (upstream.Attempt), and the answers when the pool has no target or
// every attempt failed. The goroutine exchange
// (proxy.go), message targets (message.go) and the event loop's exchange
// (loop.go, for server/loopproxy_linux.go) all use these.

// kindOf turns an attempt's error into its failure kind for the driver
// (upstream.Attempt): the proxy's own errors (the client's body, a failed
// dial or TLS handshake) first, then upstream.Classify.
func kindOf(err error) upstream.Kind {
	var de *dialError
	switch {
	case errors.Is(err, errClientBody):
		return upstream.ClientBody
	case handshakeFailed(err):
		return upstream.Handshake
	case errors.As(err, &de):
		return upstream.Classify(err, true)
	}
	return upstream.Classify(err, false)
}

// answer answers a request whose attempts ended without a response to
// relay, as the driver says (Reply).
func (p *Proxy) answer(w *server.ResponseWriter, a *upstream.Attempt) {
	switch a.Reply() {
	case upstream.Unavailable:
		p.unavailable(w, a.Pool(), a.Err())
	case upstream.BadRequestBody:
		p.respondError(w, server.StatusFor(a.Err()), "bad request body\n")
		w.SetClose()
	case upstream.NoReply:
	default:
		p.upstreamFailed(w, a.Last(), a.Err(), a.Reply() == upstream.GatewayTimeout)
	}
}

// unavailable answers a request the pool had no target for: 503 with
// Retry-After (every target down, or the connection cap and its queue).
func (p *Proxy) unavailable(w *server.ResponseWriter, pool *upstream.Pool, err error) {
	p.log.Warn("upstream unavailable", "upstream", pool.Name(), "err", err)
	if w.Committed() {
		w.Abort()
		return
	}
	w.WriteHeader(503)
	var b [20]byte
	w.AddHeaderBytes(retryAfterField, strconv.AppendInt(b[:0], int64(pool.RetryAfter()/time.Second), 10))
	w.AddHeader("Content-Type", "text/plain; charset=utf-8")
	w.WriteString("service unavailable\n")
}

// backoff waits d before a retry (the caller checked that the total
// timeout leaves time for it).
func (p *Proxy) backoff(d time.Duration) {
	tm := time.NewTimer(d)
	<-tm.C
}

var retryAfterField = []byte("Retry-After")
