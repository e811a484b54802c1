package upstream

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// TestApplyCheck: verdicts change after healthy_after passes or
// unhealthy_after failures in a row, and not before.
func TestApplyCheck(t *testing.T) {
	p := newPool(t, Options{Targets: specs(3)})
	x := p.Targets()[0]
	o := ActiveOptions{HealthyAfter: 2, UnhealthyAfter: 3}.withDefaults()
	steps := []struct {
		ok        bool
		available bool
		health    Health
	}{
		{false, true, HealthUnknown}, {false, true, HealthUnknown}, {true, true, HealthUnknown}, // run broken
		{false, true, HealthUnknown}, {false, true, HealthUnknown}, {false, false, HealthUnhealthy},
		{false, false, HealthUnhealthy}, {true, false, HealthUnhealthy}, {true, true, HealthHealthy},
		{true, true, HealthHealthy}, {false, true, HealthHealthy},
	}
	for i, s := range steps {
		p.applyCheck(x, s.ok, o, 0, nil)
		if x.Available() != s.available || Health(x.health.Load()) != s.health {
			t.Fatalf("step %d: available %v health %v, want %v %v", i, x.Available(), Health(x.health.Load()), s.available, s.health)
		}
	}
	snap := p.Snapshot(nil)[0]
	if snap.ChecksOK != 4 || snap.ChecksFailed != 7 {
		t.Errorf("counters %+v", snap)
	}
}

// TestCheckerRemovesAndRestores runs the scheduler with a probe that fails
// one target for a while: it leaves selection, then comes back. Windows
// are asserted loosely (the machine is shared): out within
// unhealthy_after x interval plus slack, back within healthy_after x
// interval plus slack.
func TestCheckerRemovesAndRestores(t *testing.T) {
	const interval = 20 * time.Millisecond
	p := newPool(t, Options{Targets: specs(3)})
	bad := p.Targets()[1]
	var mu sync.Mutex
	failing := false
	probes := map[*Target]int{}
	probe := func(ctx context.Context, x *Target) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		probes[x]++
		if x == bad && failing {
			return 0, errors.New("refused")
		}
		return 204, nil
	}
	c := p.StartChecks(ActiveOptions{Interval: interval, HealthyAfter: 2, UnhealthyAfter: 3, Expect: MustStatusSet("200-299")}, probe)
	defer c.Stop()
	waitFor := func(what string, cond func() bool, within time.Duration) time.Duration {
		t.Helper()
		start := time.Now()
		for !cond() {
			if time.Since(start) > within {
				t.Fatalf("%s: not within %v", what, within)
			}
			time.Sleep(time.Millisecond)
		}
		return time.Since(start)
	}
	const slack = 5 * time.Second // generous: the verdict needs 2-3 timer turns
	mu.Lock()
	failing = true
	mu.Unlock()
	out := waitFor("removed", func() bool { return !bad.Available() }, 3*interval+slack)
	for range 100 {
		x, _ := p.Select(nil, nil)
		if x == bad {
			t.Fatal("unhealthy target selected")
		}
		p.Done(x, StatusResult(200))
	}
	mu.Lock()
	failing = false
	mu.Unlock()
	back := waitFor("restored", bad.Available, 2*interval+slack)
	t.Logf("out after %v, back after %v (interval %v)", out, back, interval)
	c.Stop()
	mu.Lock()
	n := probes[p.Targets()[0]]
	mu.Unlock()
	time.Sleep(3 * interval)
	mu.Lock()
	if probes[p.Targets()[0]] != n {
		t.Error("probes after Stop")
	}
	mu.Unlock()
}

// TestCheckTimeout: a probe that hangs is cut at the timeout and counts
// as a failure.
func TestCheckTimeout(t *testing.T) {
	p := newPool(t, Options{Targets: specs(1)})
	c := &Checker{p: p, o: ActiveOptions{Timeout: 10 * time.Millisecond, UnhealthyAfter: 1}.withDefaults(), probe: func(ctx context.Context, _ *Target) (int, error) {
		<-ctx.Done()
		return 0, ctx.Err()
	}}
	c.check(context.Background(), p.Targets()[0])
	if p.Targets()[0].Available() {
		t.Error("hanging probe passed")
	}
}
