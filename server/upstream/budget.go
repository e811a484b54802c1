package upstream

import (
	"sync/atomic"
	"time"
)

// Budget limits concurrent retries to a share of the requests in flight,
// with a floor (Envoy's retry budget): during an outage, when every
// request fails, retries cannot multiply the load on the upstream. It is
// safe for concurrent use.
type Budget struct {
	Percent int // of the requests in flight
	Min     int // retries always allowed at once
	active  atomic.Int64
}

// TryAcquire takes a retry token if the retries in flight stay within the
// budget for inflight requests. A token taken must be Released.
func (b *Budget) TryAcquire(inflight int64) bool {
	limit := max(int64(b.Min), inflight*int64(b.Percent)/100)
	for {
		n := b.active.Load()
		if n >= limit {
			return false
		}
		if b.active.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// Release returns a token.
func (b *Budget) Release() { b.active.Add(-1) }

// Active is the number of tokens held: retries in flight.
func (b *Budget) Active() int64 { return b.active.Load() }

// RetryState is one request's retry bookkeeping, kept by the engine in its
// per-request state (no allocation): the targets tried, the retries spent,
// and the budget token its current retry holds.
type RetryState struct {
	// Tried holds every target an attempt went to; Refused those that
	// refused the connection.
	Tried   Exclude
	Refused Exclude
	Retries int
	token   bool
	last    Decision
}

// SelectNext selects the target of a request's next attempt: one it has
// not tried. A retry (not a failover) in a pool whose targets have all
// been tried goes again to one that at least accepted the connection:
// "another target where one exists", the same one otherwise.
func (p *Pool) SelectNext(key []byte, rs *RetryState) (*Target, error) {
	t, err := p.Select(key, &rs.Tried)
	if err == ErrExhausted && rs.last == Retry {
		t, err = p.Select(key, &rs.Refused)
	}
	return t, err
}

// Decide records the attempt on t (already Done) and decides what comes
// next (see the package function Decide). A Retry holds a budget token
// until the next Decide or Finish, so the budget counts retries in
// flight. The requests in flight are counted as the attempts in flight of
// the pool's targets (no counter is touched per request for the budget).
func (p *Pool) Decide(rs *RetryState, t *Target, f Facts) Decision {
	rs.Tried.Add(t)
	if f.Result.Outcome == ConnectFailure {
		rs.Refused.Add(t)
	}
	p.releaseToken(rs)
	d := Decide(&p.opts.Retry, f, rs.Retries, func() bool {
		rs.token = p.budget.TryAcquire(p.inflight())
		if !rs.token {
			p.lin.budgetRefusals.Add(1)
		}
		return rs.token
	})
	if d == Retry {
		rs.Retries++
		p.lin.retries.Add(1)
	}
	rs.last = d
	return d
}

// Finish ends the request's retry bookkeeping and resets rs for reuse.
func (p *Pool) Finish(rs *RetryState) {
	p.releaseToken(rs)
	rs.Tried.Reset()
	rs.Refused.Reset()
	rs.Retries, rs.last = 0, Stop
}

func (p *Pool) releaseToken(rs *RetryState) {
	if rs.token {
		rs.token = false
		p.budget.Release()
	}
}

// Backoff is the jittered delay before the request's next retry.
func (p *Pool) Backoff(rs *RetryState) time.Duration {
	return p.opts.Retry.BackoffFor(rs.Retries)
}

// RetriesInFlight is the number of budget tokens held.
func (p *Pool) RetriesInFlight() int64 { return p.budget.Active() }

// inflight sums the targets' attempts in flight (only on the retry path).
func (p *Pool) inflight() int64 {
	var n int64
	for _, t := range p.targets {
		n += t.inflight.Load()
	}
	return n
}
