package upstream

import (
	"time"
)

// StatusClasses is the number of response status classes counted per
// target: 1..5 for 1xx..5xx, 0 for a status outside 100..599.
const StatusClasses = 6

// Outcomes is the number of Outcome values.
const Outcomes = int(Canceled) + 1

// count records an attempt's outcome (Done): a response by its status
// class, one atomic add on the line Done already writes (requests); the
// other outcomes, on the failure path, by kind. Snapshot derives the
// Response count from the classes.
func (t *Target) count(r Result) {
	switch {
	case r.Outcome == Response:
		c := r.Status / 100
		if c < 1 || c >= StatusClasses {
			c = 0
		}
		t.byClass[c].Add(1)
	case int(r.Outcome) < Outcomes:
		t.byOutcome[r.Outcome].Add(1)
	}
}

// Retries is the number of retries the pool and the pools it was reloaded
// from have made.
func (p *Pool) Retries() uint64 { return p.lin.retries.Load() }

// BudgetRefusals is the number of retries the retry budget refused.
func (p *Pool) BudgetRefusals() uint64 { return p.lin.budgetRefusals.Load() }

// ObserveLatency counts the time from sending a request to the target
// (connecting included) to its response head, on shard (the server
// connection's metrics shard: no cache line shared with other loops).
// The proxies call it only when counting is on.
func (t *Target) ObserveLatency(shard int, d time.Duration) { t.latency.Observe(shard, d) }
