package upstream

import (
	"errors"
	"math/rand/v2"
	"strconv"
	"time"
)

// Defaults of retries and timeouts.
const (
	// DefaultRetryAttempts is the retries after the first try (not
	// counting connect failovers): one, as nginx's proxy_next_upstream
	// effectively gives with two servers.
	DefaultRetryAttempts = 1
	// DefaultRetryOn are the conditions retried by default.
	DefaultRetryOn = "connect_failure,reset,502,503,504"
	// DefaultBudgetPercent is Envoy's retry budget (20 % of the active
	// requests) and DefaultMinRetries its floor of 3 concurrent retries,
	// so a small pool can still retry at all.
	DefaultBudgetPercent = 20
	DefaultMinRetries    = 3
	// DefaultBackoff is the base of the exponential backoff (Envoy's
	// 25 ms); the cap is backoffCapFactor times the base (Envoy: 10x).
	DefaultBackoff   = 25 * time.Millisecond
	backoffCapFactor = 10

	DefaultConnectTimeout        = 2 * time.Second
	DefaultResponseHeaderTimeout = 30 * time.Second
	// DefaultTryTimeout bounds one attempt up to its response head;
	// DefaultTotalTimeout every attempt and backoff of a request up to
	// its response head. Bodies are bounded per read, not in total, so
	// long downloads are not cut.
	DefaultTryTimeout   = 30 * time.Second
	DefaultTotalTimeout = 60 * time.Second
)

// Retry conditions (RetryOn.Kinds).
const (
	OnConnectFailure uint8 = 1 << iota
	OnReset
	OnTimeout
)

// RetryOn is the set of conditions a request is retried on.
type RetryOn struct {
	Kinds    uint8
	Statuses StatusSet
}

// ErrRetryOn is ParseRetryOn's error.
var ErrRetryOn = errors.New(`upstream: retry condition must be connect_failure, reset, timeout, 5xx or a status 500-599`)

// ParseRetryOn parses conditions: "connect_failure", "reset", "timeout",
// "5xx" or a status code 500-599.
func ParseRetryOn(conds []string) (RetryOn, error) {
	var r RetryOn
	for _, c := range conds {
		switch c {
		case "connect_failure":
			r.Kinds |= OnConnectFailure
		case "reset":
			r.Kinds |= OnReset
		case "timeout":
			r.Kinds |= OnTimeout
		case "5xx":
			r.Statuses.AddRange(500, 599)
		default:
			n, err := strconv.Atoi(c)
			if err != nil || n < 500 || n > 599 {
				return RetryOn{}, ErrRetryOn
			}
			r.Statuses.AddRange(n, n)
		}
	}
	return r, nil
}

// Matches reports whether r is one of the conditions.
func (on *RetryOn) Matches(r Result) bool {
	switch r.Outcome {
	case ConnectFailure:
		return on.Kinds&OnConnectFailure != 0
	case Reset:
		return on.Kinds&OnReset != 0
	case Timeout:
		return on.Kinds&OnTimeout != 0
	case Response:
		return on.Statuses.Has(r.Status)
	}
	return false
}

// RetryPolicy configures retries.
type RetryPolicy struct {
	// Attempts is the number of retries after the first try; connect
	// failovers do not count. 0 takes the default; NoRetries turns them
	// off.
	Attempts int
	// On are the retried conditions (the default when zero).
	On RetryOn
	// BudgetPercent and MinConcurrent: retries in flight are at most
	// BudgetPercent of the requests in flight, or MinConcurrent if more.
	BudgetPercent int
	MinConcurrent int
	// Backoff is the first retry's base delay; each retry doubles it, up
	// to MaxBackoff (backoffCapFactor x Backoff when zero).
	Backoff    time.Duration
	MaxBackoff time.Duration
}

// NoRetries as RetryPolicy.Attempts turns retries off (connect failures
// still fail over).
const NoRetries = -1

func (r RetryPolicy) withDefaults() RetryPolicy {
	switch {
	case r.Attempts == 0:
		r.Attempts = DefaultRetryAttempts
	case r.Attempts < 0:
		r.Attempts = 0
	}
	if r.On == (RetryOn{}) {
		r.On, _ = ParseRetryOn(splitComma(DefaultRetryOn))
	}
	if r.BudgetPercent <= 0 {
		r.BudgetPercent = DefaultBudgetPercent
	}
	if r.MinConcurrent <= 0 {
		r.MinConcurrent = DefaultMinRetries
	}
	if r.Backoff <= 0 {
		r.Backoff = DefaultBackoff
	}
	if r.MaxBackoff <= 0 {
		r.MaxBackoff = backoffCapFactor * r.Backoff
	}
	return r
}

func splitComma(s string) []string {
	var out []string
	for len(s) > 0 {
		i := 0
		for i < len(s) && s[i] != ',' {
			i++
		}
		out = append(out, s[:i])
		s = s[min(i+1, len(s)):]
	}
	return out
}

// IdempotentMethod reports whether method is idempotent (RFC 9110
// §9.2.2): GET, HEAD, OPTIONS, TRACE, PUT, DELETE. Methods are
// case-sensitive (§9.1).
func IdempotentMethod(method []byte) bool {
	switch string(method) {
	case "GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE":
		return true
	}
	return false
}

// MayResend is the replay-safety rule: a request may go to the upstream
// again if not one byte of it was written to the previous one (nothing can
// have been acted on), or its method is idempotent and its body can be
// sent again (kept, or empty), or it carries an Idempotency-Key (the client
// declared replays safe).
func MayResend(written bool, idempotent, replayableBody, idempotencyKey bool) bool {
	return !written || idempotent && replayableBody || idempotencyKey
}

// ResendStale is the rule for an attempt that failed on a connection
// taken from the keep-alive pool before any response byte arrived (read
// false): the upstream had closed it (lost: EOF, reset or broken pipe,
// not a timeout), so the failure is the pool's, not the target's. The
// request goes again, once and on a new connection, whenever the resend
// rule allows it (may: MayResend), whatever the retry policy says
// (Attempts, budget, backoff): an upstream's keep-alive timeout can
// close any number of pooled connections at once, and each resend on
// another pooled one may meet another closed one. A new connection's
// failure is the target's, for the retry policy. net/http decides the
// same way (transport.go, shouldRetryRequest). The attempt driver
// (Attempt.Failed) applies it for every engine.
func ResendStale(reused, read, lost, may bool) bool {
	return reused && !read && lost && may
}

// Facts are what the retry decision needs to know about a failed attempt.
type Facts struct {
	Result Result
	// Written: at least one byte of the request reached the upstream.
	Written bool
	// Idempotent: IdempotentMethod of the request's method.
	Idempotent bool
	// Replayable: the body can be sent again (none, or kept in full).
	Replayable bool
	// IdempotencyKey: the request carries an Idempotency-Key field.
	IdempotencyKey bool
}

// Decision is what to do after an attempt.
type Decision uint8

const (
	// Stop: answer with this attempt's result.
	Stop Decision = iota
	// Failover: nothing was sent; select another target at once, without
	// spending a retry, the budget, or a backoff.
	Failover
	// Retry: select another target after Backoff, within the budget.
	Retry
)

func (d Decision) String() string {
	switch d {
	case Failover:
		return "failover"
	case Retry:
		return "retry"
	}
	return "stop"
}

// Decide is the retry decision, free of state: given the attempt's facts,
// the policy, the retries this request has already spent and whether the
// budget grants one more, it says whether to stop, fail over or retry.
// Connect failures always fail over (bounded by the pool's targets: the
// engine stops when Select returns ErrExhausted). Anything else is retried
// only if it is one of the policy's conditions, resending is safe
// (MayResend), attempts remain and the budget allows.
func Decide(pol *RetryPolicy, f Facts, retries int, budget func() bool) Decision {
	switch f.Result.Outcome {
	case Canceled:
		return Stop
	case ConnectFailure:
		return Failover
	}
	if !pol.On.Matches(f.Result) || !MayResend(f.Written, f.Idempotent, f.Replayable, f.IdempotencyKey) ||
		retries >= pol.Attempts || !budget() {
		return Stop
	}
	return Retry
}

// BackoffFor is the delay before retry number n (1 for the first): the base
// doubled n-1 times, capped, with "equal jitter" (a uniform draw from the
// upper half), so retries of many requests spread out yet never come back
// at once.
func (r *RetryPolicy) BackoffFor(n int) time.Duration {
	d := r.Backoff
	for i := 1; i < n && d < r.MaxBackoff; i++ {
		d *= 2
	}
	d = min(d, r.MaxBackoff)
	half := d / 2
	return half + time.Duration(rand.Int64N(int64(half)+1))
}

// Timeouts bound an upstream exchange; the engines enforce them.
type Timeouts struct {
	// Connect bounds a dial.
	Connect time.Duration
	// ResponseHeader bounds the wait for the response head once the
	// request is sent, and each read of the body.
	ResponseHeader time.Duration
	// Try bounds one attempt, from selection to its response head.
	Try time.Duration
	// Total bounds the request, every attempt and backoff included, up to
	// its response head.
	Total time.Duration
}

func (t Timeouts) withDefaults() Timeouts {
	if t.Connect <= 0 {
		t.Connect = DefaultConnectTimeout
	}
	if t.ResponseHeader <= 0 {
		t.ResponseHeader = DefaultResponseHeaderTimeout
	}
	if t.Try <= 0 {
		t.Try = DefaultTryTimeout
	}
	if t.Total <= 0 {
		t.Total = DefaultTotalTimeout
	}
	return t
}

// TryDeadline is the deadline of an attempt starting at now for a request
// that started at start: now+Try, but never past start+Total. ok is false
// when the total has already passed (no attempt may start).
func (t Timeouts) TryDeadline(start, now time.Time) (deadline time.Time, ok bool) {
	end := start.Add(t.Total)
	if !now.Before(end) {
		return time.Time{}, false
	}
	d := now.Add(t.Try)
	if d.After(end) {
		d = end
	}
	return d, true
}
