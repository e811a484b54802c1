package server

import (
	"net/netip"
	"time"

	phttp "github.com/simdedge/simdedge/parse/http"
	"github.com/simdedge/simdedge/server/upstream"
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
	// LoopTarget selects the target of the exchange's next attempt
	// (upstream.Pool.AcquireNext), without blocking: t identifies it
	// for the loop's keep-alive pools and LoopDone, addr is where to
	// connect. rs is the exchange's retry bookkeeping, kept by the loop
	// (zeroed for each request). upstream.ErrQueued means every target
	// is at its cap and w was queued: w.Notify (which must not block)
	// says when to call it again, and LoopCancel takes w out. Any other
	// error means no target may be chosen: Unavailable answers it.
	LoopTarget(r *Request, rs *upstream.RetryState, w *upstream.Waiter) (t *upstream.Target, addr netip.AddrPort, err error)
	// LoopCancel takes a queued waiter out of the admission queue.
	LoopCancel(w *upstream.Waiter)
	// LoopDone ends the attempt on t with its result (passive health,
	// the in-flight count): exactly once per LoopTarget that succeeded.
	LoopDone(t *upstream.Target, res upstream.Result)
	// LoopRetry is the retry decision after a failed attempt on t (its
	// LoopDone already called): Stop (answer it), Failover (select
	// another target at once) or Retry (after backoff, a deadline on
	// the loop's clock). written: bytes of the request reached t.
	LoopRetry(r *Request, rs *upstream.RetryState, t *upstream.Target, res upstream.Result, written bool) (d upstream.Decision, backoff time.Duration)
	// LoopFinish ends the exchange's retry bookkeeping (budget token).
	LoopFinish(rs *upstream.RetryState)
	// Unavailable answers w when no target could be selected (every
	// target down or at its cap): 503 with Retry-After.
	Unavailable(w *ResponseWriter, err error)
	// LoopTimeouts are the upstream's timeouts and the loop's
	// keep-alive pool settings.
	LoopTimeouts() LoopTimeouts
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
	// failure. t is the last target tried (nil if none).
	Failed(w *ResponseWriter, t *upstream.Target, err error, dial bool)
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

// LoopTimeouts are an upstream's timeouts as the loop enforces them (on
// its own clock) and its keep-alive pool settings.
type LoopTimeouts struct {
	// Connect bounds a connect; Header the wait for the response head
	// once the request is sent, and each wait for body bytes.
	Connect, Header time.Duration
	// Try bounds an attempt up to its response head, Total every
	// attempt and backoff of the request up to its head.
	Try, Total time.Duration
	// Idle: pooled connections idle longer are closed; MaxIdle is how
	// many idle connections the loop keeps per target.
	Idle    time.Duration
	MaxIdle int
	// Queue is how long a request may wait for a target below its
	// connection cap (queue.timeout); zero when there is no cap (the
	// loop then passes no waiter).
	Queue time.Duration
}
