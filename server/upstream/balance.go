package upstream

import "math/rand/v2"

// balancer is one selection policy. pick returns an eligible target (see
// Pool.eligible; health says whether unavailable targets are skipped), or
// nil when none is. It must be safe for concurrent use and allocate
// nothing.
type balancer interface {
	pick(p *Pool, key []byte, ex *Exclude, health bool) *Target
}

func newBalancer(b Balance, ts []*Target, w []int) (balancer, error) {
	switch b {
	case RoundRobin:
		return newRoundRobin(ts, w)
	case LeastConn:
		return &leastConn{ts: ts}, nil
	case P2C:
		return &p2c{newWeighted(ts, w)}, nil
	case Random:
		return &random{newWeighted(ts, w)}, nil
	case Hash:
		return newMaglev(ts, w), nil
	}
	return nil, ErrBalance
}

// scan returns the first eligible target from ts[start] on, wrapping: the
// fallback of the policies whose first choices were all ineligible.
func scan(p *Pool, ts []*Target, start int, ex *Exclude, health bool) *Target {
	n := len(ts)
	for j := range n {
		if t := ts[(start+j)%n]; p.eligible(t, ex, health) {
			return t
		}
	}
	return nil
}

// weighted draws targets at random in proportion to their weights.
type weighted struct {
	ts []*Target
	// cum are the cumulative weights (nil when all weights are equal).
	cum   []int
	total int
}

func newWeighted(ts []*Target, w []int) weighted {
	wd := weighted{ts: ts}
	equal := true
	for _, x := range w {
		equal = equal && x == w[0]
	}
	if !equal {
		for _, x := range w {
			wd.total += x
			wd.cum = append(wd.cum, wd.total)
		}
	}
	return wd
}

func (w *weighted) draw() int {
	if w.cum == nil {
		return rand.IntN(len(w.ts))
	}
	r := rand.IntN(w.total)
	lo, hi := 0, len(w.cum)-1
	for lo < hi { // first cum[i] > r
		m := (lo + hi) / 2
		if w.cum[m] > r {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return lo
}

// randomDraws bounds the draws before a policy falls back to a scan: with
// half the pool ineligible, four draws all miss one time in sixteen.
const randomDraws = 4

// drawEligible draws up to randomDraws times for an eligible target other
// than not.
func (w *weighted) drawEligible(p *Pool, ex *Exclude, health bool, not *Target) *Target {
	for range randomDraws {
		if t := w.ts[w.draw()]; t != not && p.eligible(t, ex, health) {
			return t
		}
	}
	return nil
}

// random is weighted random selection.
type random struct{ weighted }

func (r *random) pick(p *Pool, _ []byte, ex *Exclude, health bool) *Target {
	if t := r.drawEligible(p, ex, health, nil); t != nil {
		return t
	}
	return scan(p, r.ts, rand.IntN(len(r.ts)), ex, health)
}
