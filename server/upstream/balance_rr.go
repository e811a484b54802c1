package upstream

import "sync/atomic"

// roundRobin is smooth weighted round robin, nginx's: each turn every
// target's current weight grows by its weight, the largest is chosen and
// loses the total. The sequence is periodic (period: the weights' sum over
// their gcd), so it is computed once at build and walked with one atomic
// counter: selection takes no lock. With equal weights it is plain
// rotation and needs no table.
type roundRobin struct {
	ts    []*Target
	sched []uint16 // nil: rotation
	next  atomic.Uint64
}

func newRoundRobin(ts []*Target, w []int) (*roundRobin, error) {
	rr := &roundRobin{ts: ts}
	g := 0
	for _, x := range w {
		g = gcd(g, x)
	}
	sum := 0
	for _, x := range w {
		sum += x / g
	}
	if sum == len(ts) {
		return rr, nil // equal weights
	}
	if sum > MaxWeightSum {
		return nil, ErrWeightSum
	}
	cur := make([]int, len(w))
	rr.sched = make([]uint16, sum)
	for k := range rr.sched {
		best := 0
		for i, x := range w {
			cur[i] += x / g
			if cur[i] > cur[best] {
				best = i
			}
		}
		cur[best] -= sum
		rr.sched[k] = uint16(best)
	}
	return rr, nil
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// rrScanFactor: a selection looks at up to this many schedule entries per
// target before it scans the targets themselves (an ineligible target's
// turns pass to the entries after it).
const rrScanFactor = 2

func (r *roundRobin) pick(p *Pool, _ []byte, ex *Exclude, health bool) *Target {
	n := uint64(len(r.ts))
	start := r.next.Add(1) - 1
	if r.sched == nil {
		return scan(p, r.ts, int(start%n), ex, health)
	}
	l := uint64(len(r.sched))
	for j := range min(l, rrScanFactor*n) {
		if t := r.ts[r.sched[(start+j)%l]]; p.eligible(t, ex, health) {
			return t
		}
	}
	return scan(p, r.ts, int(start%n), ex, health)
}
