package upstream

import (
	"errors"
	"sync"
	"time"
)

// The attempt driver: one request's way through the pool, for every engine
// and transport (the goroutine proxy, message targets, HTTP/2 upstreams,
// the event loop's exchanges). It does no I/O: an engine asks it for a
// target (Next), does the exchange, and tells it what happened (Failed,
// Head); the driver answers with the next Step. It holds, once, what the
// engines used to keep each: the stale-connection resend rule, the retry
// decision with its budget and backoff (Pool.Decide, Pool.Backoff), the
// attempt limit, the try and total deadlines, the "every target refused"
// state and the answer after the last failure. Caddy's reverse proxy is
// the model (one retry loop for every transport, one function that says
// whether to try again), and net/http's shouldRetryRequest for the resend
// rule.
//
// Times are durations on the engine's monotonic clock (any origin, the same
// for every call of a request): the event loop passes its loop clock, the
// goroutine paths the time since the request started.

// Step is what the engine does next.
type Step uint8

const (
	// StepGo: make an attempt on Target within Left.
	StepGo Step = iota
	// StepWait: every target is at its connection cap and the Waiter was
	// queued; call Next again when it is notified (or CancelWait and
	// answer ErrQueueTimeout at queue.timeout: QueueExpired).
	StepWait
	// StepAnswer: the attempts are over; answer the client as Answer says.
	StepAnswer
	// StepFailover: select another target at once (call Next).
	StepFailover
	// StepRetry: call Next after Backoff.
	StepRetry
	// StepResend: the attempt's pooled connection had been closed by the
	// upstream; send the request again to the same target on a new
	// connection, at once (the attempt goes on).
	StepResend
	// StepRelay: pass the response on (Head).
	StepRelay
)

func (s Step) String() string {
	switch s {
	case StepGo:
		return "go"
	case StepWait:
		return "wait"
	case StepAnswer:
		return "answer"
	case StepFailover:
		return "failover"
	case StepRetry:
		return "retry"
	case StepResend:
		return "resend"
	case StepRelay:
		return "relay"
	}
	return "unknown"
}

// Reply is the answer a request gets when its attempts are over without a
// response to relay.
type Reply uint8

const (
	// Unavailable: 503 with Retry-After (Pool.RetryAfter): no target
	// could be selected, or every attempt was refused (the pool is down).
	Unavailable Reply = iota + 1
	// BadGateway: 502.
	BadGateway
	// GatewayTimeout: 504.
	GatewayTimeout
	// BadRequestBody: the client's request body failed; the engine
	// answers from its error (Err: server.StatusFor's status).
	BadRequestBody
	// NoReply: the client went away; nobody is left to answer.
	NoReply
)

var (
	// ErrTotalTimeout: the total timeout passed before a response head.
	ErrTotalTimeout error = &totalTimeoutError{}
	// ErrRetriedStatus stands for a response that was retried and had no
	// successor.
	ErrRetriedStatus = errors.New("upstream: upstream answered with a retried status")
)

type totalTimeoutError struct{}

func (*totalTimeoutError) Error() string   { return "upstream: total timeout" }
func (*totalTimeoutError) Timeout() bool   { return true }
func (*totalTimeoutError) Temporary() bool { return true }

// firstRetryStatus: responses below it are never retried (the retry
// conditions name 5xx statuses only), so Head decides nothing for them.
const firstRetryStatus = 500

// Failure is what an engine saw of a failed attempt.
type Failure struct {
	// Err is the failure, for the log and the engine's own answers.
	Err  error
	Kind Kind
	// Written: at least one byte of the request was accepted by the
	// kernel (or the transport) on this connection.
	Written bool
	// Read: at least one byte of a response arrived.
	Read bool
	// Fresh: the connection was made for this attempt (not taken from a
	// keep-alive pool); a transport without pooled connections says
	// true.
	Fresh bool
}

// Attempt is one request's attempt driver. The zero value is not ready: Begin
// starts it, Finish ends it. It belongs to one request (not safe for
// concurrent use) and is meant to live in the engine's per-request state:
// it allocates nothing unless an attempt fails (the retry bookkeeping,
// RetryState, then comes from a sync.Pool until Finish).
type Attempt struct {
	pool *Pool
	key  []byte
	// w, when set, makes selection non-blocking (Acquire; Wait).
	w  *Waiter
	rs *RetryState
	// Request facts: an idempotent method, an Idempotency-Key field, and
	// a body still held whole (replayable).
	idem, idemKey, held bool
	start, left         time.Duration
	// t is the target in flight (Done not yet called); status the
	// response head Head passed on (0: none).
	t      *Target
	status int
	// attempts is the attempts selected; resent: this one was resent on
	// a new connection.
	attempts int
	resent   bool
	// err, last and reply: the previous failure, its target and its
	// answer; refused: every failure so far was a refused connection.
	err     error
	last    *Target
	reply   Reply
	refused bool
	backoff time.Duration
}

// Begin starts the driver for a request on p. key is its hash key
// (Pool.Key); idempotent and idempotencyKey are facts of the request
// (IdempotentMethod, an Idempotency-Key field); w, if not nil, makes
// selection non-blocking under a connection cap (event loops); now is the
// request's start.
func (a *Attempt) Begin(p *Pool, key []byte, idempotent, idempotencyKey bool, w *Waiter, now time.Duration) {
	*a = Attempt{pool: p, key: key, w: w, idem: idempotent, idemKey: idempotencyKey, held: true,
		start: now, refused: true}
}

// BodyStreamed records that the request body is no longer held whole (it
// streams to the upstream): the request cannot go again once written.
func (a *Attempt) BodyStreamed() { a.held = false }

// Pool is the pool the driver selects from.
func (a *Attempt) Pool() *Pool { return a.pool }

// Target is the attempt's target, nil when none is in flight.
func (a *Attempt) Target() *Target { return a.t }

// Left is the time the attempt may take up to its response head: the try
// timeout, within the total.
func (a *Attempt) Left() time.Duration { return a.left }

// Backoff is the wait before the next attempt after Retry.
func (a *Attempt) Backoff() time.Duration { return a.backoff }

// Reply is the answer after Answer.
func (a *Attempt) Reply() Reply { return a.reply }

// Err is the cause of the answer: the last failure, ErrTotalTimeout, or
// the selection's error.
func (a *Attempt) Err() error { return a.err }

// Last is the target of the last failure (nil if none).
func (a *Attempt) Last() *Target { return a.last }

// maxAttempts bounds the attempts of a request: the first, one failover
// per target and the policy's retries. The retry decision already bounds
// them (failovers go to targets not tried, retries are counted); this is
// the driver's own guard against a loop.
func (a *Attempt) maxAttempts() int {
	return 1 + len(a.pool.targets) + a.pool.opts.Retry.Attempts
}

// Next selects the next attempt's target: Go (Target, Left), Wait, or
// Answer when the total timeout passed or no target is left.
func (a *Attempt) Next(now time.Duration) Step {
	a.resent, a.status = false, 0
	end := a.start + a.pool.opts.Timeouts.Total
	if now >= end {
		return a.answer(GatewayTimeout, ErrTotalTimeout)
	}
	if a.attempts >= a.maxAttempts() {
		return a.answer(a.reply, a.err)
	}
	var t *Target
	var err error
	switch {
	case a.rs == nil && a.w != nil:
		t, err = a.pool.Acquire(a.key, nil, a.w)
	case a.rs == nil:
		t, err = a.pool.AcquireWait(a.key, nil, nil)
	case a.w != nil:
		t, err = a.pool.AcquireNext(a.key, a.rs, a.w)
	default:
		t, err = a.pool.AcquireNextWait(a.key, a.rs, nil)
	}
	switch {
	case err == ErrQueued:
		return StepWait
	case err == ErrExhausted && a.err != nil:
		// Every target tried: the last failure is the answer, a 503
		// if no target even took the connection.
		if a.refused {
			return a.answer(Unavailable, a.err)
		}
		return a.answer(a.reply, a.err)
	case err != nil:
		return a.answer(Unavailable, err)
	}
	a.t = t
	a.attempts++
	a.left = min(a.pool.opts.Timeouts.Try, end-now)
	return StepGo
}

func (a *Attempt) answer(r Reply, err error) Step {
	a.reply, a.err = r, err
	return StepAnswer
}

// QueueExpired ends a request that waited for a target longer than
// queue.timeout: it leaves the queue and is answered 503.
func (a *Attempt) QueueExpired() Step {
	a.CancelWait()
	return a.answer(Unavailable, ErrQueueTimeout)
}

// CancelWait takes the request's Waiter out of the admission queue (the
// client went away, or the queue timeout passed).
func (a *Attempt) CancelWait() {
	if a.w != nil {
		a.pool.Cancel(a.w)
	}
}

// Failed takes the failure of the attempt in flight before a response
// head was passed on, and says what comes next: Resend (a stale pooled
// connection, whatever the retry policy: ResendStale), Failover, Retry
// after Backoff, or Answer. Any step but Resend ends the attempt (Done).
func (a *Attempt) Failed(now time.Duration, f Failure) Step {
	t := a.t
	if f.Kind == ClientBody || f.Kind == Gone {
		// Nothing to say about the target, nor to decide.
		a.End(Result{Outcome: Canceled})
		return a.answer(f.Kind.reply(), f.Err)
	}
	if !a.resent && ResendStale(!f.Fresh, f.Read, f.Kind == Lost, a.mayResend(f.Written)) {
		a.resent = true
		return StepResend
	}
	res := Result{Outcome: f.Kind.Outcome()}
	a.End(res)
	a.err, a.last, a.reply = f.Err, t, f.Kind.reply()
	a.refused = a.refused && f.Kind == Refused
	if f.Kind == Cancelled {
		// The upstream cancelled the stream: nothing to decide.
		return StepAnswer
	}
	return a.decide(now, t, res, f.Written)
}

// mayResend is the resend rule (MayResend) with the request's facts: a
// body no longer held never goes again once written, whatever the key.
func (a *Attempt) mayResend(written bool) bool {
	return MayResend(written, a.idem, a.held, a.idemKey && a.held)
}

// Head takes the status of the attempt's response head: Relay it, or Retry
// after Backoff when the status is one the policy retries (the response is
// then dropped: the engine closes its connection). The attempt stays in
// flight while relayed, until End or Finish. now is called only for a
// status that may be retried (the backoff must fit in the total): an
// engine whose clock read costs (a goroutine's time.Now on a virtual
// machine) reads it once per request on the common path.
func (a *Attempt) Head(status int, now func() time.Duration) Step {
	a.status = status
	if status < firstRetryStatus {
		return StepRelay // the common case: no decision to make
	}
	t := a.t
	res := StatusResult(status)
	if a.decide(now(), t, res, true) != StepRetry {
		return StepRelay
	}
	a.End(res)
	a.err, a.last, a.reply, a.refused = ErrRetriedStatus, t, BadGateway, false
	return StepRetry
}

// decide is the retry decision (Pool.Decide) on the attempt that ended on
// t with res: Failover, Retry (with time left for its backoff) or Answer.
func (a *Attempt) decide(now time.Duration, t *Target, res Result, written bool) Step {
	if a.rs == nil {
		a.rs = retryStates.Get().(*RetryState)
	}
	d := a.pool.Decide(a.rs, t, Facts{Result: res, Written: written, Idempotent: a.idem,
		Replayable: a.held, IdempotencyKey: a.idemKey && a.held})
	switch d {
	case Failover:
		return StepFailover
	case Retry:
		a.backoff = a.pool.Backoff(a.rs)
		if now+a.backoff < a.start+a.pool.opts.Timeouts.Total {
			return StepRetry
		}
	}
	return StepAnswer
}

// End ends the attempt in flight with res (passive health, the in-flight
// count), if one is: a response relayed, or one that failed mid-body.
func (a *Attempt) End(res Result) {
	if a.t != nil {
		a.pool.Done(a.t, res)
		a.t = nil
	}
}

// Finish ends the request: the attempt in flight, if any, ends with its
// status (or Canceled: the client went away before a head), and the retry
// bookkeeping is released.
func (a *Attempt) Finish() {
	if a.t != nil {
		res := Result{Outcome: Canceled}
		if a.status != 0 {
			res = StatusResult(a.status)
		}
		a.End(res)
	}
	if a.rs != nil {
		a.pool.Finish(a.rs)
		retryStates.Put(a.rs)
		a.rs = nil
	}
}

// retryStates holds the drivers' retry bookkeeping. A RetryState given to
// the pool escapes (selection calls the balance policy through an
// interface), so one inside the Attempt would make every Attempt escape
// and cost an allocation per request on goroutine engines; a request
// takes one only when an attempt failed or answered 5xx, and its first
// attempt selects with no exclusions.
var retryStates = sync.Pool{New: func() any { return new(RetryState) }}
