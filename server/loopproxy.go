package server

import (
	"net/netip"
	"time"

	phttp "github.com/simdedge/simdedge/parse/http"
)

// LoopProxier is an optional interface of a Handler, beside Inliner: the
// event-loop engine, when Options.LoopProxy is on, asks it for requests
// that Inliner did not take, once the head is parsed and the body (if any)
// is wholly buffered. A non-nil LoopUpstream makes the loop forward the
// request itself over non-blocking upstream connections in its own epoll
// set (nginx's model), instead of handing the connection to a goroutine.
// nil keeps the hand-off. The Request's head accessors are valid during the
// call.
type LoopProxier interface {
	LoopProxy(r *Request) LoopUpstream
}

// LoopUpstream is what the loop needs from a reverse proxy to drive one
// exchange: the policy (which target, the rewritten request head, the
// answers to failures) stays with the proxy, the I/O with the loop. The
// loop calls it from its own goroutine only, so it must not block.
type LoopUpstream interface {
	// LoopTarget picks the target of one exchange: key identifies it
	// for the loop's keep-alive pools (comparable, stable for the
	// target's life), addr is where to connect.
	LoopTarget() (key any, addr netip.AddrPort)
	// LoopTimeouts are the connect timeout, the response-header timeout
	// (also each wait for body bytes), how long a pooled connection may
	// idle, and how many idle connections the loop keeps per target.
	LoopTimeouts() (connect, header, idle time.Duration, maxIdle int)
	// AppendRequest appends the request to forward (rewritten head and
	// buffered body) to b. ok false means it answered w itself (a bad
	// request body) and nothing is forwarded.
	AppendRequest(b []byte, w *ResponseWriter, r *Request) (out []byte, ok bool)
	// ParseResponseHead parses the final response head at the start of
	// b into resp, skipping interim (1xx) responses. n is the bytes
	// used; err is phttp.ErrNeedMore while incomplete (n then counts
	// the interim responses consumed), any other error a failure.
	ParseResponseHead(b []byte, resp *phttp.Response, isHead bool) (n int, err error)
	// WriteResponseHead starts w with resp's status and end-to-end
	// fields, as the proxy forwards them; scratch is a free buffer it
	// may use, returned for reuse.
	WriteResponseHead(w *ResponseWriter, resp *phttp.Response, scratch []byte, isHead bool) []byte
	// Failed answers w for an exchange that failed before a response
	// head arrived (502, or 504 for a timeout); dial tells a connect
	// failure.
	Failed(w *ResponseWriter, key any, err error, dial bool)
	// BodyFailed handles an upstream that failed mid-body.
	BodyFailed(w *ResponseWriter)
	// MayResend reports whether r, which failed before any response
	// byte arrived, may be sent again on another connection; written
	// says that at least one byte of it was accepted by the kernel.
	// Its body is buffered, so it can be replayed. This is the proxy's
	// resend rule (server/proxy/replay.go), the one the goroutine
	// proxy applies.
	MayResend(r *Request, written bool) bool
}
