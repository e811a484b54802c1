package upstream

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/simdedge/simdedge/server/metrics"
)

// Target state bits (Target.state). A target is available when no bit is
// set; selection skips unavailable targets unless the pool is in panic
// mode.
const (
	stateEjected   uint32 = 1 << iota // passive health: ejected until ejectedUntil
	stateUnhealthy                    // active health: failing its checks
)

// Health is a target's active-health verdict.
type Health uint8

const (
	// HealthUnknown: no active check has decided yet (or none is
	// configured). It counts as healthy: a pool that starts with every
	// target unknown serves at once instead of waiting healthy_after
	// intervals.
	HealthUnknown Health = iota
	HealthHealthy
	HealthUnhealthy
)

func (h Health) String() string {
	switch h {
	case HealthHealthy:
		return "healthy"
	case HealthUnhealthy:
		return "unhealthy"
	}
	return "unknown"
}

// lineage is shared by a pool and every pool built from it with
// Options.Previous, as are the targets they keep. Its epoch moves on every
// availability transition of any of their targets, so a pool knows that
// its cached availability summary is stale with one atomic load per
// selection and without a clock read.
type lineage struct {
	epoch atomic.Uint64
	// retries and budgetRefusals count the pool's retries and the
	// retries its budget refused (only on the failure path), here so
	// that they survive reloads as the targets' counters do.
	retries, budgetRefusals atomic.Uint64
}

// Target is one upstream address and its state. Every field that changes
// is atomic: selection on many event loops and goroutines reads them
// without a lock. A Target outlives a reload when the address stays in the
// configuration (Options.Previous), and with it its health, ejection
// history, in-flight count and the engine's Slot.
type Target struct {
	addr string
	lin  *lineage

	// weight is the configured weight (1..MaxWeight). Atomic because a
	// reload may change it while the old pool still selects.
	weight atomic.Int32
	// inflight counts attempts started (Select) and not yet Done.
	inflight atomic.Int64
	// state holds the state* bits.
	state atomic.Uint32
	// consecutive counts failures since the last success (passive health).
	consecutive atomic.Int32
	// ejections counts ejections since the last success after a return;
	// each repeat ejection lasts longer.
	ejections atomic.Int32
	// ejectedUntil is when the current ejection ends (UnixNano), for
	// Snapshot and RetryAfter; the timer does the actual return.
	ejectedUntil atomic.Int64
	// health is the active checks' verdict (a Health); checkRun counts
	// consecutive check results of one kind, positive for passes and
	// negative for failures.
	health   atomic.Uint32
	checkRun atomic.Int32

	// latency is the time to response heads (ObserveLatency), sharded
	// as the server's counters are.
	latency *metrics.Histogram
	// Counters for Snapshot (metrics). byClass and byOutcome sit next to
	// requests, whose line Done dirties anyway (counters.go).
	requests, failures     atomic.Uint64
	byClass                [StatusClasses]atomic.Uint64
	byOutcome              [Outcomes]atomic.Uint64
	checksOK, checksFailed atomic.Uint64
	ejectedTotal           atomic.Uint64

	// slot is the engine's per-target data (a connection pool).
	slot atomic.Pointer[any]
	// owner is the newest pool that holds the target: an ejection's
	// timer reports the return through it (log, OnChange) even when a
	// reload replaced the pool that ejected it.
	owner atomic.Pointer[Pool]
	// retired: a reload dropped the target (Retire).
	retired atomic.Bool
	// downs counts the target's transitions to unavailable (Downs).
	downs atomic.Uint64

	// mu serialises ejection and return (rare), and owns timer.
	mu    sync.Mutex
	timer *time.Timer
}

func newTarget(addr string, weight int, lin *lineage) *Target {
	t := &Target{addr: addr, lin: lin, latency: metrics.NewHistogram()}
	t.weight.Store(int32(weight))
	return t
}

// Address is the target's address as configured ("127.0.0.1:9001").
func (t *Target) Address() string { return t.addr }

// Weight is the target's weight.
func (t *Target) Weight() int { return int(t.weight.Load()) }

// InFlight is the number of attempts selected and not yet Done.
func (t *Target) InFlight() int64 { return t.inflight.Load() }

// Available reports whether selection may choose t outside panic mode:
// not ejected and not failing active checks.
func (t *Target) Available() bool { return t.state.Load() == 0 }

// Slot returns the value the engine attached with SetSlot, or nil.
func (t *Target) Slot() any {
	if p := t.slot.Load(); p != nil {
		return *p
	}
	return nil
}

// SetSlot attaches engine data to t (a connection pool). It is carried
// across reloads with the target. Safe for concurrent use.
func (t *Target) SetSlot(v any) { t.slot.Store(&v) }

// CompareAndSetSlot attaches v only if the slot is still empty, so
// engines racing to create a target's connection pool agree on one. It
// returns the slot's value after the call.
func (t *Target) CompareAndSetSlot(v any) any {
	if t.slot.CompareAndSwap(nil, &v) {
		return v
	}
	return t.Slot()
}

// setBit and clearBit change the availability state and move the
// lineage's epoch, so every pool recomputes its summary.
func (t *Target) setBit(b uint32) bool {
	for {
		s := t.state.Load()
		if s&b != 0 {
			return false
		}
		if t.state.CompareAndSwap(s, s|b) {
			if s == 0 {
				t.downs.Add(1)
			}
			t.lin.epoch.Add(1)
			return true
		}
	}
}

func (t *Target) clearBit(b uint32) bool {
	for {
		s := t.state.Load()
		if s&b == 0 {
			return false
		}
		if t.state.CompareAndSwap(s, s&^b) {
			t.lin.epoch.Add(1)
			return true
		}
	}
}

// TargetState is a target's state at one moment, for metrics and the
// admin listener.
type TargetState struct {
	Address  string
	Weight   int
	Health   Health
	Ejected  bool
	InFlight int64
	// EjectedUntil is when the current ejection ends (zero if none).
	EjectedUntil time.Time
	// Ejections is the current run of repeat ejections.
	Ejections           int
	ConsecutiveFailures int
	// Counters since the target was created (they survive reloads).
	Requests, Failures     uint64
	ChecksOK, ChecksFailed uint64
	EjectedTotal           uint64
	// ByClass counts responses by status class (index 1..5 for 1xx..5xx,
	// 0 for anything else); ByOutcome counts attempts by Outcome
	// (Response included).
	ByClass   [StatusClasses]uint64
	ByOutcome [Outcomes]uint64
	// Latency is the time from sending a request (connecting included)
	// to its response head.
	Latency metrics.HistogramTotals
}

func (t *Target) snapshot() TargetState {
	s := t.state.Load()
	ts := TargetState{
		Address:             t.addr,
		Weight:              t.Weight(),
		Health:              Health(t.health.Load()),
		Ejected:             s&stateEjected != 0,
		InFlight:            t.inflight.Load(),
		Ejections:           int(t.ejections.Load()),
		ConsecutiveFailures: int(t.consecutive.Load()),
		Requests:            t.requests.Load(),
		Failures:            t.failures.Load(),
		ChecksOK:            t.checksOK.Load(),
		ChecksFailed:        t.checksFailed.Load(),
		EjectedTotal:        t.ejectedTotal.Load(),
	}
	for i := range ts.ByClass {
		ts.ByClass[i] = t.byClass[i].Load()
		ts.ByOutcome[Response] += ts.ByClass[i]
	}
	for i := Response + 1; int(i) < Outcomes; i++ {
		ts.ByOutcome[i] = t.byOutcome[i].Load()
	}
	if ts.Ejected {
		ts.EjectedUntil = time.Unix(0, t.ejectedUntil.Load())
	}
	ts.Latency = t.latency.Totals()
	return ts
}
