package proxy

import (
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/upstream"
)

// The proxy's side of the upstream policy (server/upstream): turning what
// an attempt did into a Result for the pool, and the answers when the
// pool has no target or every attempt failed. The goroutine exchange
// (proxy.go), message targets (message.go) and the event loop's exchange
// (loop.go, for server/loopproxy_linux.go) all use these.

// firstRetryStatus: responses below it are never retried (the retry
// conditions name 5xx statuses only), so they skip the retry decision.
const firstRetryStatus = 500

var (
	// errTotalTimeout: the upstream's total timeout passed before a
	// response head (a 504).
	errTotalTimeout = &totalTimeoutError{"proxy: upstream total timeout"}
	// errRetriedStatus stands for a response that was retried and then
	// had no successor (every target tried).
	errRetriedStatus = errors.New("proxy: upstream answered with a retried status")
)

type totalTimeoutError struct{ s string }

func (e *totalTimeoutError) Error() string { return e.s }
func (e *totalTimeoutError) Timeout() bool { return true }

// resultOf classifies an attempt's failure before a response head.
func resultOf(err error) upstream.Result {
	var de *dialError
	switch {
	case errors.As(err, &de):
		return upstream.Result{Outcome: upstream.ConnectFailure}
	case timeoutError(err):
		return upstream.Result{Outcome: upstream.Timeout}
	}
	return upstream.Result{Outcome: upstream.Reset}
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

// attemptsFailed answers after the last attempt failed: 503 with
// Retry-After when no target could even be connected to (the pool is
// down: every target tried refused), else 502, or 504 for a timeout.
func (p *Proxy) attemptsFailed(w *server.ResponseWriter, pool *upstream.Pool, t *target, err error, refusedOnly bool) {
	if refusedOnly && t != nil {
		p.unavailable(w, pool, err)
		return
	}
	if t == nil {
		t = p.up.targets[0]
	}
	p.upstreamFailed(w, t, err, false)
}

// backoff waits d before a retry (the caller checked that the total
// timeout leaves time for it).
func (p *Proxy) backoff(d time.Duration) {
	tm := time.NewTimer(d)
	<-tm.C
}

var retryAfterField = []byte("Retry-After")

// retryStates holds the goroutine paths' retry bookkeeping. A RetryState
// passed to the pool escapes (selection calls the balance policy through
// an interface), so one on the stack would cost an allocation per
// request; instead a request takes one only when an attempt failed or
// answered 5xx, and the first attempt selects with no exclusions.
var retryStates = sync.Pool{New: func() any { return new(upstream.RetryState) }}

// acquireWait selects the next attempt's target: the first with no
// retry state, the following through rs.
func acquireWait(pool *upstream.Pool, key []byte, rs *upstream.RetryState) (*upstream.Target, error) {
	if rs == nil {
		return pool.AcquireWait(key, nil, nil)
	}
	return pool.AcquireNextWait(key, rs, nil)
}

// releaseRetryState ends the request's retry bookkeeping (its budget
// token) and returns rs to retryStates.
func releaseRetryState(pool *upstream.Pool, rs *upstream.RetryState) {
	if rs != nil {
		pool.Finish(rs)
		retryStates.Put(rs)
	}
}
