package upstream

// Helpers the engines share (server/proxy's goroutine and message paths,
// the event loop's exchanges): the retry-aware selection with a connection
// cap, and the retirement of targets a reload dropped.

// AcquireNext is SelectNext through the admission queue: with
// max_conns_per_target it queues w when every candidate is at its cap
// (ErrQueued; the engine waits for w.Notify and calls it again). It never
// blocks.
func (p *Pool) AcquireNext(key []byte, rs *RetryState, w *Waiter) (*Target, error) {
	t, err := p.Acquire(key, &rs.Tried, w)
	if err == ErrExhausted && rs.last == Retry {
		t, err = p.Acquire(key, &rs.Refused, w)
	}
	return t, err
}

// AcquireNextWait is AcquireNext for goroutine engines: it blocks until a
// target is selected, queue.timeout passes or done is closed.
func (p *Pool) AcquireNextWait(key []byte, rs *RetryState, done <-chan struct{}) (*Target, error) {
	t, err := p.AcquireWait(key, &rs.Tried, done)
	if err == ErrExhausted && rs.last == Retry {
		t, err = p.AcquireWait(key, &rs.Refused, done)
	}
	return t, err
}

// Retire marks t as dropped by a reload (Departed) or by its upstream's
// Close: engines stop reusing its connections and close them. Its state
// is otherwise kept (a later reload may not bring it back: a pool built
// afterwards creates a new Target for the address), but an ejection's
// timer is stopped: nothing would use the return, and it would be logged
// and reported (OnChange) for a target no pool serves.
func (t *Target) Retire() {
	t.retired.Store(true)
	t.mu.Lock()
	if t.timer != nil {
		t.timer.Stop()
		t.timer = nil
	}
	t.mu.Unlock()
}

// Retired reports whether a reload dropped t.
func (t *Target) Retired() bool { return t.retired.Load() }

// Reusable reports whether an engine may reuse an idle connection to t:
// it is available (not ejected, not failing checks) and not retired. An
// engine checks it when taking a pooled connection, so the connections of
// a target that went down are not reused even where OnChange cannot reach
// them (another goroutine's or loop's pool).
func (t *Target) Reusable() bool { return t.Available() && !t.retired.Load() }

// Downs counts the times t became unavailable (ejected or failing its
// checks). An engine that keeps idle connections where OnChange cannot
// reach them (an event loop's own pools) notes it when pooling and drops
// the connections if it moved: they were pooled before the target went
// down, even if it is back by the time they would be reused.
func (t *Target) Downs() uint64 { return t.downs.Load() }
