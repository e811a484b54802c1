package server

import (
	"time"

	phttp "github.com/simdedge/simdedge/parse/http"
	"github.com/simdedge/simdedge/server/upstream"
)

// LoopProxier is an optional interface of a Handler, beside Inliner: the
// event-loop engine, when Options.LoopProxy is on, asks a request's plan's
// action (plan.go) when the plan cannot run inline and its steps need no
// goroutine, once the head is parsed and the body (if any) is wholly
// buffered. The loop runs the plan's steps when the request begins, before
// its first attempt. A non-nil LoopUpstream makes the loop forward the
// request itself over non-blocking upstream connections in its own epoll
// set (nginx's model), instead of handing the connection to a goroutine.
// nil keeps the hand-off. The Request's head accessors are valid during the
// call.
type LoopProxier interface {
	LoopProxy(r *Request) LoopUpstream
}

// LoopUpstream is what the loop needs from a reverse proxy to drive one
// exchange: the attempt driver (upstream.Attempt, which the loop runs),
// the rewritten request head and the answers to failures come from the
// proxy, the I/O is the loop's. The loop calls it from its own goroutine
// only, so it must not block.
type LoopUpstream interface {
	// LoopBegin starts the exchange's attempt driver for r: a.Begin with
	// the upstream's pool and the request's facts. The loop then drives
	// the attempts through a (upstream.Attempt: Next, Failed, Head,
	// Finish), as every proxy path does. w is the waiter of the
	// admission queue (nil without a connection cap): its Notify, which
	// must not block, says when to select again after upstream.StepWait.
	// now is the loop's clock.
	LoopBegin(a *upstream.Attempt, r *Request, w *upstream.Waiter, now time.Duration)
	// Answer answers w when the attempts ended without a response to
	// relay, as a.Reply says (503 with Retry-After, 502, 504).
	Answer(w *ResponseWriter, a *upstream.Attempt)
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
	// BodyFailed handles an upstream that failed mid-body.
	BodyFailed(w *ResponseWriter)
}

// LoopTimeouts are an upstream's timeouts as the loop enforces them (on
// its own clock) and its keep-alive pool settings.
type LoopTimeouts struct {
	// Connect bounds a connect; Header the wait for the response head
	// once the request is sent, and each wait for body bytes. (The try
	// and total timeouts are the attempt driver's.)
	Connect, Header time.Duration
	// Idle: pooled connections idle longer are closed; MaxIdle is how
	// many idle connections the loop keeps per target.
	Idle    time.Duration
	MaxIdle int
	// Queue is how long a request may wait for a target below its
	// connection cap (queue.timeout); zero when there is no cap (the
	// loop then passes no waiter).
	Queue time.Duration
}
