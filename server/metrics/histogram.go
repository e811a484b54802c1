package metrics

import (
	"runtime"
	"sync/atomic"
	"time"
)

// shardCount is the number of shards of every sharded block: shardsPerCPU
// per CPU, rounded up to a power of two (shard indexes are masked).
func shardCount() int {
	n := 1
	for n < shardsPerCPU*runtime.GOMAXPROCS(0) {
		n *= 2
	}
	return n
}

// bucketOf is the DurationBuckets index of a duration in nanoseconds
// (len(DurationBuckets) for +Inf).
func bucketOf(ns int64) int {
	for i, ub := range bucketNanos {
		if ns <= ub {
			return i
		}
	}
	return len(bucketNanos)
}

// histCounters is one shard of a Histogram.
type histCounters struct {
	buckets  [len(DurationBuckets) + 1]atomic.Uint64
	sumNanos atomic.Uint64
}

const histCountersSize = 8 * (len(DurationBuckets) + 2)

type histShard struct {
	histCounters
	_ [cacheLine - histCountersSize%cacheLine]byte
}

// Histogram is a sharded duration histogram over DurationBuckets (the
// upstream response time of a target). Observe is safe for concurrent
// use; a nil Histogram counts nothing.
type Histogram struct {
	shards []histShard
}

// NewHistogram returns an empty histogram sized like a Set's blocks.
func NewHistogram() *Histogram {
	return &Histogram{shards: make([]histShard, shardCount())}
}

// Observe counts d on shard (a connection's Set.Shard index).
func (h *Histogram) Observe(shard int, d time.Duration) {
	if h == nil {
		return
	}
	s := &h.shards[shard&(len(h.shards)-1)]
	ns := int64(d)
	s.buckets[bucketOf(ns)].Add(1)
	if ns > 0 {
		s.sumNanos.Add(uint64(ns))
	}
}

// HistogramTotals are a histogram's shards summed: Buckets cumulative,
// the last one being the count.
type HistogramTotals struct {
	Buckets [len(DurationBuckets) + 1]uint64
	Sum     time.Duration
}

// Count is the number of observations.
func (t *HistogramTotals) Count() uint64 { return t.Buckets[len(t.Buckets)-1] }

// Totals sums the shards.
func (h *Histogram) Totals() HistogramTotals {
	var t HistogramTotals
	if h == nil {
		return t
	}
	for i := range h.shards {
		s := &h.shards[i]
		for b := range s.buckets {
			t.Buckets[b] += s.buckets[b].Load()
		}
		t.Sum += time.Duration(s.sumNanos.Load())
	}
	for b := 1; b < len(t.Buckets); b++ {
		t.Buckets[b] += t.Buckets[b-1]
	}
	return t
}
