package upstream

import "time"

// Defaults of passive health, and its bounds.
const (
	// DefaultConsecutiveFailures is Envoy's consecutive_5xx default: low
	// enough that a dead target costs few requests, high enough that one
	// bad request does not eject a healthy target.
	DefaultConsecutiveFailures = 5
	// DefaultEjectFor is Envoy's base_ejection_time.
	DefaultEjectFor = 30 * time.Second
	// DefaultMaxEjectFor caps the growing ejection time (Envoy's
	// max_ejection_time).
	DefaultMaxEjectFor = 300 * time.Second
	// DefaultMaxEjectedPercent: at most half the pool is ejected; beyond
	// that the pool is in panic mode (Envoy's healthy_panic_threshold).
	DefaultMaxEjectedPercent = 50
)

// PassiveOptions configure passive health (outlier ejection).
type PassiveOptions struct {
	// ConsecutiveFailures ejects a target after that many failed attempts
	// in a row (connect failures, resets, timeouts, 5xx). 0 takes the
	// default; Disabled turns passive health off.
	ConsecutiveFailures int
	Disabled            bool
	// EjectFor is the first ejection's length; the k-th repeat ejection
	// without a success in between lasts k times as long, up to
	// MaxEjectFor.
	EjectFor    time.Duration
	MaxEjectFor time.Duration
	// MaxEjectedPercent is the share of the pool that may be ejected (or
	// be unavailable before the pool panics), 0-100; 0 takes the
	// default, and NoEjection allows none.
	MaxEjectedPercent int
}

// NoEjection as MaxEjectedPercent: no target is ever ejected, and any
// unavailable target puts the pool in panic mode.
const NoEjection = -1

func (o PassiveOptions) withDefaults() PassiveOptions {
	if o.ConsecutiveFailures <= 0 {
		o.ConsecutiveFailures = DefaultConsecutiveFailures
	}
	if o.EjectFor <= 0 {
		o.EjectFor = DefaultEjectFor
	}
	if o.MaxEjectFor <= 0 {
		o.MaxEjectFor = max(DefaultMaxEjectFor, o.EjectFor)
	}
	switch {
	case o.MaxEjectedPercent == 0:
		o.MaxEjectedPercent = DefaultMaxEjectedPercent
	case o.MaxEjectedPercent < 0:
		o.MaxEjectedPercent = 0
	case o.MaxEjectedPercent > 100:
		o.MaxEjectedPercent = 100
	}
	return o
}

// ejectFor is the length of the k-th ejection in a row (k >= 1).
func (o PassiveOptions) ejectFor(k int) time.Duration {
	if d := o.EjectFor * time.Duration(k); d > 0 && d < o.MaxEjectFor {
		return d
	}
	return o.MaxEjectFor
}

// Failed reports whether r counts against the target's health: connect
// failures, resets, timeouts and 5xx responses. A canceled attempt (the
// client left) says nothing about the target.
func (r Result) Failed() bool {
	switch r.Outcome {
	case ConnectFailure, Reset, Timeout:
		return true
	case Response:
		return r.Status >= 500
	}
	return false
}

// failed records a failed attempt on t and ejects it at the threshold.
func (p *Pool) failed(t *Target) {
	n := t.consecutive.Add(1)
	po := &p.opts.Passive
	if po.Disabled || int(n) < po.ConsecutiveFailures || t.state.Load()&stateEjected != 0 {
		return
	}
	p.eject(t)
}

// succeeded resets the failure run; a success after a return also ends
// the run of repeat ejections. Two loads when nothing is to be reset.
func (p *Pool) succeeded(t *Target) {
	if t.consecutive.Load() != 0 {
		t.consecutive.Store(0)
	}
	if t.ejections.Load() != 0 && t.state.Load()&stateEjected == 0 {
		t.ejections.Store(0)
	}
}

// eject takes t out of selection for its ejection time, unless that would
// eject more than max_ejected of the pool. The return is a timer, so
// selection never reads a clock to see whether an ejection has ended.
func (p *Pool) eject(t *Target) {
	if p.ejectLocked(t) {
		p.changed(t)
	}
}

func (p *Pool) ejectLocked(t *Target) bool {
	p.ejectMu.Lock()
	defer p.ejectMu.Unlock()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.state.Load()&stateEjected != 0 {
		return false // another failure ejected it first
	}
	ejected := 0
	for _, x := range p.targets {
		if x.state.Load()&stateEjected != 0 {
			ejected++
		}
	}
	if ejected+1 > p.maxEjected {
		return false // the failure run stays; a later failure tries again
	}
	if testEjectCounted != nil {
		testEjectCounted()
	}
	k := int(t.ejections.Add(1))
	d := p.opts.Passive.ejectFor(k)
	t.ejectedUntil.Store(time.Now().Add(d).UnixNano())
	t.consecutive.Store(0)
	t.ejectedTotal.Add(1)
	t.setBit(stateEjected)
	if t.timer != nil {
		t.timer.Stop()
	}
	t.timer = time.AfterFunc(d, func() { t.unEject(k) })
	p.log.Warn("upstream: target ejected", "target", t.addr, "for", d, "ejections", k)
	return true
}

// unEject returns t after its k-th ejection, unless a later one replaced
// it or t was retired (Retire stops the timer, but it may have fired
// already).
func (t *Target) unEject(k int) {
	t.mu.Lock()
	if t.retired.Load() || int(t.ejections.Load()) != k || !t.clearBit(stateEjected) {
		t.mu.Unlock()
		return
	}
	t.ejectedUntil.Store(0)
	t.mu.Unlock()
	p := t.owner.Load()
	p.log.Info("upstream: target returned", "target", t.addr, "after_ejections", k)
	p.changed(t)
}

// testEjectCounted, when set by a test, runs between counting the ejected
// targets and ejecting one more: the window ejectMu closes.
var testEjectCounted func()
