package metrics

import (
	"sync/atomic"
	"time"
)

// Reloads holds the outcome of the last configuration load: the start's,
// then each reload's (SIGHUP or the admin POST /reload). It is what
// simdedge_config_last_reload_success and
// simdedge_config_last_reload_timestamp_seconds publish, the names
// Prometheus gives its own, so an alert written for one fits the other.
// The serve loop writes it; scrapes read it.
type Reloads struct {
	// last packs the outcome into one word, so a scrape never pairs one
	// reload's time with another's outcome: Unix nanoseconds with the
	// lowest bit replaced by reloadFailed. 0: nothing recorded yet.
	last atomic.Int64
}

// reloadFailed is the bit of Reloads.last that marks a refused reload
// (the time loses its last nanosecond to it).
const reloadFailed = 1

// Record notes an outcome. A nil Reloads (counting off) ignores it.
func (r *Reloads) Record(applied bool, at time.Time) {
	if r == nil {
		return
	}
	v := at.UnixNano() &^ reloadFailed
	if !applied {
		v |= reloadFailed
	}
	if v == 0 {
		v = 2 // the epoch itself, applied: keep 0 for "none"
	}
	r.last.Store(v)
}

// Last returns the last outcome, and ok false before any was recorded.
func (r *Reloads) Last() (applied bool, at time.Time, ok bool) {
	if r == nil {
		return false, time.Time{}, false
	}
	v := r.last.Load()
	if v == 0 {
		return false, time.Time{}, false
	}
	return v&reloadFailed == 0, time.Unix(0, v&^reloadFailed), true
}

// Reloads returns the set's reload outcome (nil on a nil Set).
func (s *Set) Reloads() *Reloads {
	if s == nil {
		return nil
	}
	return &s.reloads
}
