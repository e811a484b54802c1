package upstream

import (
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// Limits of a pool, checked by New (and by server/config, with the line).
const (
	// MaxTargets bounds a pool: the Maglev table (65537 entries) keeps
	// about 64 entries per target at this size, enough for an even
	// spread, and least_conn scans every target.
	MaxTargets = 1024
	// MaxWeight bounds one target's weight (nginx and Envoy use small
	// integers too; ratios beyond 1000:1 are better written as separate
	// pools).
	MaxWeight = 1000
	// MaxWeightSum bounds the sum of the weights divided by their greatest
	// common divisor: the round-robin schedule has that many entries
	// (uint16 each, so 128 KiB at most).
	MaxWeightSum = 1 << 16
)

// Errors of selection. The engines answer ErrNoHealthy, ErrExhausted,
// ErrQueueFull and ErrQueueTimeout with 503 and Retry-After
// (Pool.RetryAfter).
var (
	ErrNoTargets      = errors.New("upstream: pool has no targets")
	ErrTooManyTargets = errors.New("upstream: pool has more than MaxTargets targets")
	ErrWeight         = errors.New("upstream: target weight out of range 1..MaxWeight")
	ErrWeightSum      = errors.New("upstream: sum of target weights (over their gcd) above MaxWeightSum")
	ErrDuplicate      = errors.New("upstream: duplicate target address")
	ErrBalance        = errors.New("upstream: unknown balance policy")
	// ErrNoHealthy: every target is ejected or failing its checks, and
	// panic mode does not apply (max_ejected is 100 %).
	ErrNoHealthy = errors.New("upstream: no healthy target")
	// ErrExhausted: every target selection may choose was already tried
	// by this request (the Exclude set).
	ErrExhausted = errors.New("upstream: every target tried")
	// ErrFull: every target selection may choose is at
	// max_conns_per_target; the request may wait in the queue (Acquire).
	ErrFull = errors.New("upstream: every target at its connection cap")
)

// Balance names a selection policy.
type Balance string

// Balance policies.
const (
	RoundRobin Balance = "round_robin" // smooth weighted round robin (nginx)
	LeastConn  Balance = "least_conn"  // fewest in-flight / weight
	P2C        Balance = "p2c"         // power of two random choices
	Random     Balance = "random"      // weighted random
	Hash       Balance = "hash"        // consistent hashing (Maglev)
	// DefaultBalance is nginx's default and needs no key.
	DefaultBalance = RoundRobin
)

// TargetSpec is one configured target.
type TargetSpec struct {
	Address string
	// Weight is relative (0 means 1).
	Weight int
}

// Options configures a Pool. Zero values take the defaults documented on
// each field.
type Options struct {
	Name    string
	Targets []TargetSpec
	// Balance is the selection policy (DefaultBalance when empty).
	Balance Balance
	// HashKey says which part of a request the hash policy hashes
	// (ParseHashKey); a zero HashKey hashes nothing (Key returns nil) and
	// the hash policy then spreads requests round robin over its table.
	HashKey HashKey
	Passive PassiveOptions
	// MaxConnsPerTarget caps each target's attempts in flight (0: no cap).
	// Beyond it, requests wait in a queue of QueueSize (0: the default,
	// DefaultQueueSize; negative: no waiting) for at most QueueTimeout
	// (Acquire, AcquireWait).
	MaxConnsPerTarget int
	QueueSize         int
	QueueTimeout      time.Duration
	Retry             RetryPolicy
	Timeouts          Timeouts
	// Previous is the pool this one replaces on a reload: targets whose
	// address remains keep their state (health, ejection, in-flight count,
	// Slot). Departed lists the others, whose connections should drain.
	Previous *Pool
	Logger   *slog.Logger
	// OnChange, if set, is called after a target's availability changed
	// (ejected, returned, active verdict), on the goroutine that changed
	// it (a Done caller, a timer, a checker): the engine closes the idle
	// connections of a target that became unavailable. It must not block.
	OnChange func(t *Target)
}

// Pool is a set of targets and the policies that choose among them. It is
// safe for concurrent use by any number of goroutines and event loops;
// selection takes no lock, reads no clock and allocates nothing.
type Pool struct {
	opts    Options
	targets []*Target
	lin     *lineage
	bal     balancer
	// summary caches availability: the lineage epoch it was computed
	// at (<< summaryShift), and the degraded and panic bits.
	summary atomic.Uint64
	// maxEjected is the number of targets that may be ejected at once
	// (max_ejected of the pool, rounded down).
	maxEjected int
	queue      *Queue
	budget     Budget
	log        *slog.Logger
	// ejectMu makes "count the ejected, then eject one more" atomic, so
	// failures of two targets at once cannot pass max_ejected together.
	ejectMu sync.Mutex
}

// New builds a pool from o.
func New(o Options) (*Pool, error) {
	n := len(o.Targets)
	switch {
	case n == 0:
		return nil, ErrNoTargets
	case n > MaxTargets:
		return nil, ErrTooManyTargets
	}
	if o.Balance == "" {
		o.Balance = DefaultBalance
	}
	o.Passive = o.Passive.withDefaults()
	o.Retry = o.Retry.withDefaults()
	o.Timeouts = o.Timeouts.withDefaults()
	if o.QueueTimeout <= 0 {
		o.QueueTimeout = DefaultQueueTimeout
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	p := &Pool{opts: o, log: o.Logger.With("upstream", o.Name)}
	p.lin = &lineage{}
	old := map[string]*Target{}
	if o.Previous != nil {
		p.lin = o.Previous.lin
		for _, t := range o.Previous.targets {
			old[t.addr] = t
		}
	}
	seen := map[string]bool{}
	weights := make([]int, n)
	for i, ts := range o.Targets {
		w := ts.Weight
		if w == 0 {
			w = 1
		}
		if w < 1 || w > MaxWeight {
			return nil, ErrWeight
		}
		if seen[ts.Address] {
			return nil, ErrDuplicate
		}
		seen[ts.Address] = true
		weights[i] = w
		t := old[ts.Address]
		if t == nil {
			t = newTarget(ts.Address, w, p.lin)
		} else {
			t.weight.Store(int32(w))
		}
		t.owner.Store(p)
		p.targets = append(p.targets, t)
	}
	var err error
	if p.bal, err = newBalancer(o.Balance, p.targets, weights); err != nil {
		return nil, err
	}
	p.maxEjected = o.Passive.MaxEjectedPercent * n / 100
	p.budget = Budget{Percent: o.Retry.BudgetPercent, Min: o.Retry.MinConcurrent}
	if o.MaxConnsPerTarget > 0 {
		p.queue = newQueue(o.QueueSize, o.QueueTimeout)
	}
	p.recount(p.lin.epoch.Load())
	return p, nil
}

// Name is the pool's name.
func (p *Pool) Name() string { return p.opts.Name }

// Options returns the options the pool was built with, defaults filled.
func (p *Pool) Options() Options { o := p.opts; o.Previous = nil; return o }

// Targets are the pool's targets in configuration order. The slice must
// not be modified.
func (p *Pool) Targets() []*Target { return p.targets }

// Departed lists the targets of prev that p does not keep: the engine
// drains and closes their connections.
func (p *Pool) Departed(prev *Pool) []*Target {
	if prev == nil {
		return nil
	}
	keep := map[*Target]bool{}
	for _, t := range p.targets {
		keep[t] = true
	}
	var out []*Target
	for _, t := range prev.targets {
		if !keep[t] {
			out = append(out, t)
		}
	}
	return out
}

// Summary bits.
const (
	summaryDegraded = 1 << iota // some target is unavailable
	summaryPanic                // too many are: route to all
	summaryShift    = 2
)

// filter returns whether selection must skip unavailable targets: some
// are unavailable and the pool is not in panic mode. The cached summary
// is recomputed when a target's availability changed since (lineage
// epoch), so the common case is two atomic loads.
func (p *Pool) filter() bool {
	e := p.lin.epoch.Load()
	s := p.summary.Load()
	if s>>summaryShift != e {
		s = p.recount(e)
	}
	return s&(summaryDegraded|summaryPanic) == summaryDegraded
}

// recount computes the summary at epoch e. Racing recounts store equal
// values; a transition during the scan moves the epoch past e, so the
// next selection recounts again.
func (p *Pool) recount(e uint64) uint64 {
	down := 0
	for _, t := range p.targets {
		if !t.Available() {
			down++
		}
	}
	s := e << summaryShift
	if down > 0 {
		s |= summaryDegraded
	}
	// Panic mode (Envoy): more targets unavailable than max_ejected
	// allows means the health signal is more likely wrong, or the pool
	// overloaded, than that the rest can carry everything: spread over
	// all of them.
	if down > p.maxEjected && p.opts.Passive.MaxEjectedPercent < 100 {
		s |= summaryPanic
	}
	p.summary.Store(s)
	return s
}

// Panic reports whether the pool is in panic mode now.
func (p *Pool) Panic() bool {
	p.filter()
	return p.summary.Load()&summaryPanic != 0
}

// eligible reports whether selection may choose t.
func (p *Pool) eligible(t *Target, ex *Exclude, health bool) bool {
	if health && !t.Available() {
		return false
	}
	if m := p.opts.MaxConnsPerTarget; m > 0 && t.inflight.Load() >= int64(m) {
		return false
	}
	return !ex.Has(t)
}

// selectRounds bounds how often Select re-runs the policy when a cap was
// reached between its choice and the acquisition (a race with other
// selections).
const selectRounds = 4

// Select chooses a target for one attempt and counts it in flight: the
// engine must call Done exactly once for it. key is the hash key (Key),
// ignored by the other policies; ex holds the targets this request already
// tried (nil for none). It fails with ErrNoHealthy, ErrExhausted or
// ErrFull.
func (p *Pool) Select(key []byte, ex *Exclude) (*Target, error) {
	health := p.filter()
	for range selectRounds {
		t := p.bal.pick(p, key, ex, health)
		if t == nil {
			break
		}
		if p.acquire(t) {
			return t, nil
		}
	}
	return nil, p.why(ex, health)
}

// acquire counts t in flight, unless it is at its cap.
func (p *Pool) acquire(t *Target) bool {
	m := int64(p.opts.MaxConnsPerTarget)
	if m <= 0 {
		t.inflight.Add(1)
		return true
	}
	for {
		n := t.inflight.Load()
		if n >= m {
			return false
		}
		if t.inflight.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// why explains a failed selection.
func (p *Pool) why(ex *Exclude, health bool) error {
	available, full := 0, 0
	for _, t := range p.targets {
		if health && !t.Available() {
			continue
		}
		available++
		if ex.Has(t) {
			continue
		}
		if m := p.opts.MaxConnsPerTarget; m > 0 && t.inflight.Load() >= int64(m) {
			full++
		}
	}
	switch {
	case available == 0:
		return ErrNoHealthy
	case full > 0:
		return ErrFull
	}
	return ErrExhausted
}

// Done ends an attempt on t: it is no longer in flight, and r updates
// passive health. Call it exactly once per successful Select.
func (p *Pool) Done(t *Target, r Result) {
	t.inflight.Add(-1)
	t.count(r)
	if r.Outcome != Canceled {
		t.requests.Add(1)
		if r.Failed() {
			t.failures.Add(1)
			p.failed(t)
		} else {
			p.succeeded(t)
		}
	}
	if p.queue != nil {
		p.queue.released()
	}
}

// RetryAfter is the Retry-After a 503 from this pool should carry: until
// the earliest ejection ends, at least MinRetryAfter and at most
// MaxRetryAfter.
func (p *Pool) RetryAfter() time.Duration {
	var first int64
	for _, t := range p.targets {
		if t.state.Load()&stateEjected != 0 {
			if u := t.ejectedUntil.Load(); first == 0 || u < first {
				first = u
			}
		}
	}
	d := MinRetryAfter
	if first != 0 {
		d = time.Until(time.Unix(0, first))
	}
	return min(max(d, MinRetryAfter), MaxRetryAfter)
}

// Retry-After bounds: at least a second (the header's unit), at most the
// longest default ejection, so clients come back soon after the pool does.
const (
	MinRetryAfter = time.Second
	MaxRetryAfter = 30 * time.Second
)

// Snapshot appends every target's state to dst.
func (p *Pool) Snapshot(dst []TargetState) []TargetState {
	for _, t := range p.targets {
		dst = append(dst, t.snapshot())
	}
	return dst
}

// changed runs the OnChange hook.
func (p *Pool) changed(t *Target) {
	if p.opts.OnChange != nil {
		p.opts.OnChange(t)
	}
}

// Close wakes the requests waiting in the admission queue (they then fail
// or select as the pool now allows). Active checks are stopped by their
// Checker; an ejection's timer runs on, for a reload may carry its target
// into a new pool, until the target is retired (Target.Retire).
func (p *Pool) Close() {
	if p.queue != nil {
		p.queue.closeAll()
	}
}
