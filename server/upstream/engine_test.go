package upstream

import (
	"testing"
	"time"
)

// TestDownsReusable: Downs counts a target's transitions to unavailable
// (not each failure), and Reusable is false while it is out or once it is
// retired.
func TestDownsReusable(t *testing.T) {
	p, err := New(Options{
		Targets: []TargetSpec{{Address: "a:1"}, {Address: "b:1"}},
		Passive: PassiveOptions{ConsecutiveFailures: 1, EjectFor: time.Minute},
	})
	if err != nil {
		t.Fatal(err)
	}
	a := p.Targets()[0]
	if a.Downs() != 0 || !a.Reusable() {
		t.Fatalf("fresh target: downs %d, reusable %v", a.Downs(), a.Reusable())
	}
	for range 3 {
		if tt, err := p.Select(nil, nil); err == nil {
			p.Done(tt, Result{Outcome: Reset})
		}
	}
	if a.Available() {
		t.Fatal("target not ejected")
	}
	if a.Downs() != 1 || a.Reusable() {
		t.Errorf("ejected target: downs %d (want 1), reusable %v", a.Downs(), a.Reusable())
	}
	b := p.Targets()[1]
	b.Retire()
	if !b.Retired() || b.Reusable() {
		t.Errorf("retired target: retired %v, reusable %v", b.Retired(), b.Reusable())
	}
}

// TestAcquireNextQueues: AcquireNext queues a waiter when every target is
// at its cap, and a release notifies it.
func TestAcquireNextQueues(t *testing.T) {
	p, err := New(Options{Targets: []TargetSpec{{Address: "a:1"}}, MaxConnsPerTarget: 1})
	if err != nil {
		t.Fatal(err)
	}
	var rs RetryState
	first, err := p.AcquireNext(nil, &rs, &Waiter{})
	if err != nil {
		t.Fatal(err)
	}
	woken := 0
	w := &Waiter{Notify: func() { woken++ }}
	var rs2 RetryState
	if _, err := p.AcquireNext(nil, &rs2, w); err != ErrQueued {
		t.Fatalf("second request: %v, want ErrQueued", err)
	}
	p.Done(first, StatusResult(200))
	if woken != 1 {
		t.Fatalf("woken %d times, want 1", woken)
	}
	if tt, err := p.AcquireNext(nil, &rs2, w); err != nil || tt != first {
		t.Fatalf("after the release: %v, %v", tt, err)
	}
}
