package upstream

// excludeInline is how many tried targets an Exclude holds without
// allocating: attempts plus connect failovers rarely pass it.
const excludeInline = 8

// Exclude is the set of targets one request has tried, so that a retry or
// a failover goes to another target. The zero value is empty and ready;
// a nil *Exclude is empty. It belongs to one request (not safe for
// concurrent use) and is meant to live inside the engine's per-request
// state, where it allocates nothing up to excludeInline targets.
type Exclude struct {
	n     int
	fixed [excludeInline]*Target
	more  []*Target
}

// Add puts t in the set.
func (e *Exclude) Add(t *Target) {
	if e.Has(t) {
		return
	}
	if e.n < excludeInline {
		e.fixed[e.n] = t
	} else {
		e.more = append(e.more, t)
	}
	e.n++
}

// Has reports whether t is in the set.
func (e *Exclude) Has(t *Target) bool {
	if e == nil || e.n == 0 {
		return false
	}
	for _, x := range e.fixed[:min(e.n, excludeInline)] {
		if x == t {
			return true
		}
	}
	for _, x := range e.more {
		if x == t {
			return true
		}
	}
	return false
}

// Len is the number of targets in the set.
func (e *Exclude) Len() int {
	if e == nil {
		return 0
	}
	return e.n
}

// Reset empties the set for the next request, keeping its storage.
func (e *Exclude) Reset() {
	clear(e.fixed[:])
	clear(e.more)
	e.n, e.more = 0, e.more[:0]
}
