package upstream

import (
	"math/rand/v2"
	"sync/atomic"
)

// leastConn chooses the eligible target with the fewest attempts in
// flight per unit of weight. The scan starts one place further each time,
// so ties go round robin instead of always to the first target.
type leastConn struct {
	ts   []*Target
	next atomic.Uint64
}

func (l *leastConn) pick(p *Pool, _ []byte, ex *Exclude, health bool) *Target {
	n := uint64(len(l.ts))
	start := l.next.Add(1) - 1
	var best *Target
	var bn, bw int64
	for j := range n {
		t := l.ts[(start+j)%n]
		if !p.eligible(t, ex, health) {
			continue
		}
		tn, tw := t.inflight.Load(), int64(t.weight.Load())
		// tn/tw < bn/bw without division.
		if best == nil || tn*bw < bn*tw {
			best, bn, bw = t, tn, tw
		}
	}
	return best
}

// p2c is the power of two random choices (Mitzenmacher): two targets drawn
// by weight, the one with fewer attempts in flight per unit of weight
// wins. It spreads load nearly as well as least_conn while reading two
// counters instead of all of them, and two balancers (two loops) that see
// the same counters do not herd onto one target.
type p2c struct{ weighted }

func (c *p2c) pick(p *Pool, _ []byte, ex *Exclude, health bool) *Target {
	a := c.drawEligible(p, ex, health, nil)
	if a == nil {
		return scan(p, c.ts, rand.IntN(len(c.ts)), ex, health)
	}
	b := c.drawEligible(p, ex, health, a)
	if b == nil {
		return a
	}
	// In flight per unit of weight; a tie goes to the first draw, so
	// idle targets are chosen in proportion to their weights (the draws
	// are weighted), as (inflight+1)/weight would not do: it always
	// prefers the heavier of two idle targets.
	an, aw := a.inflight.Load(), int64(a.weight.Load())
	bn, bw := b.inflight.Load(), int64(b.weight.Load())
	if bn*aw < an*bw {
		return b
	}
	return a
}
