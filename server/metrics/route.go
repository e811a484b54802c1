package metrics

import (
	"sync/atomic"
	"time"
)

// cacheLine is the padding unit that keeps two shards off one cache line
// (64 bytes on amd64 and arm64; 128 would also cover the adjacent-line
// prefetcher of Intel CPUs, at twice the memory).
const cacheLine = 64

// DurationBuckets are the upper bounds of the request-duration histogram, in
// seconds: from 100 µs (a static answer on loopback) to 10 s (a slow
// upstream), about 2.5x apart, as Prometheus's default buckets are, but
// starting lower because an edge answers much faster than an application.
var DurationBuckets = [...]float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

// bucketNanos are DurationBuckets in nanoseconds, compared on the hot path.
var bucketNanos = func() (b [len(DurationBuckets)]int64) {
	for i, s := range DurationBuckets {
		b[i] = int64(s * float64(time.Second))
	}
	return b
}()

// routeCounters is one shard of a route's counters.
type routeCounters struct {
	// requests by listener slot (Listener.Slot), method and class.
	requests [ListenerSlots][Methods][Classes]atomic.Uint64
	// buckets counts durations per bucket (not cumulative; the last slot
	// is +Inf); sumNanos is their sum.
	buckets  [len(DurationBuckets) + 1]atomic.Uint64
	sumNanos atomic.Uint64
	bytesIn  atomic.Uint64
	bytesOut atomic.Uint64
}

// routeShard pads routeCounters to whole cache lines.
type routeShard struct {
	routeCounters
	_ [cacheLine - routeCountersSize%cacheLine]byte
}

const routeCountersSize = 8 * (ListenerSlots*Methods*Classes + len(DurationBuckets) + 1 + 3)

// Route is one route's counters. Observe is safe for concurrent use.
type Route struct {
	name   string
	shards []routeShard
}

// Name is the route's label value.
func (r *Route) Name() string { return r.name }

// Observe counts a finished request on shard (Set.Shard's index): its
// method and status indexes, duration and bytes. A nil Route counts
// nothing, so that callers need no check.
func (r *Route) Observe(shard, method, status int, d time.Duration, in, out int64) {
	r.ObserveAt(shard, 0, method, status, d, in, out)
}

// ObserveAt is Observe for a request that came through the listener
// with slot (Listener.Slot).
func (r *Route) ObserveAt(shard, slot, method, status int, d time.Duration, in, out int64) {
	if r == nil {
		return
	}
	s := &r.shards[shard&(len(r.shards)-1)]
	s.requests[slot&(ListenerSlots-1)][method][ClassIndex(status)].Add(1)
	ns := int64(d)
	s.buckets[bucketOf(ns)].Add(1)
	if ns > 0 {
		s.sumNanos.Add(uint64(ns))
	}
	s.bytesIn.Add(uint64(in))
	s.bytesOut.Add(uint64(out))
}

// RouteTotals are a route's counters summed over its shards.
type RouteTotals struct {
	// Requests sums ByListener over the listeners.
	Requests   [Methods][Classes]uint64
	ByListener [ListenerSlots][Methods][Classes]uint64
	// Buckets are cumulative, as Prometheus wants them, the last one
	// being the count.
	Buckets           [len(DurationBuckets) + 1]uint64
	Sum               time.Duration
	BytesIn, BytesOut uint64
}

// Totals sums the shards.
func (r *Route) Totals() RouteTotals {
	var t RouteTotals
	for i := range r.shards {
		s := &r.shards[i]
		for l := range s.requests {
			for m := range s.requests[l] {
				for c := range s.requests[l][m] {
					n := s.requests[l][m][c].Load()
					t.ByListener[l][m][c] += n
					t.Requests[m][c] += n
				}
			}
		}
		for b := range s.buckets {
			t.Buckets[b] += s.buckets[b].Load()
		}
		t.Sum += time.Duration(s.sumNanos.Load())
		t.BytesIn += s.bytesIn.Load()
		t.BytesOut += s.bytesOut.Load()
	}
	for b := 1; b < len(t.Buckets); b++ {
		t.Buckets[b] += t.Buckets[b-1]
	}
	return t
}
