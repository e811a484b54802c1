package upstream

import (
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestMayResend(t *testing.T) {
	for _, tc := range []struct {
		written, idem, replay, key, want bool
	}{
		{false, false, false, false, true}, // nothing sent: always
		{true, true, true, false, true},    // GET with a kept body
		{true, true, false, false, false},  // PUT whose streamed body is gone
		{true, false, true, false, false},  // POST, even with the body kept
		{true, false, false, true, true},   // POST with Idempotency-Key
		{true, false, true, true, true},
	} {
		if got := MayResend(tc.written, tc.idem, tc.replay, tc.key); got != tc.want {
			t.Errorf("MayResend(written %v, idempotent %v, replayable %v, key %v) = %v", tc.written, tc.idem, tc.replay, tc.key, got)
		}
	}
}

func TestIdempotentMethod(t *testing.T) {
	for m, want := range map[string]bool{"GET": true, "HEAD": true, "OPTIONS": true, "TRACE": true, "PUT": true, "DELETE": true,
		"POST": false, "PATCH": false, "CONNECT": false, "get": false, "": false} {
		if IdempotentMethod([]byte(m)) != want {
			t.Errorf("%q: %v", m, !want)
		}
	}
}

func TestDecide(t *testing.T) {
	pol := RetryPolicy{Attempts: 2}.withDefaults()
	yes := func() bool { return true }
	no := func() bool { return false }
	get := Facts{Written: true, Idempotent: true, Replayable: true}
	post := Facts{Written: true, Replayable: true}
	with := func(f Facts, r Result) Facts { f.Result = r; return f }
	for _, tc := range []struct {
		name    string
		f       Facts
		retries int
		budget  func() bool
		want    Decision
	}{
		{"connect failure fails over", with(post, Result{Outcome: ConnectFailure}), 5, no, Failover},
		{"canceled stops", with(get, Result{Outcome: Canceled}), 0, yes, Stop},
		{"200 stops", with(get, StatusResult(200)), 0, yes, Stop},
		{"503 GET retries", with(get, StatusResult(503)), 0, yes, Retry},
		{"500 not listed", with(get, StatusResult(500)), 0, yes, Stop},
		{"reset GET retries", with(get, Result{Outcome: Reset}), 1, yes, Retry},
		{"timeout not listed by default", with(get, Result{Outcome: Timeout}), 0, yes, Stop},
		{"attempts spent", with(get, StatusResult(502)), 2, yes, Stop},
		{"budget spent", with(get, StatusResult(502)), 0, no, Stop},
		{"POST after bytes never", with(post, Result{Outcome: Reset}), 0, yes, Stop},
		{"POST before bytes", with(Facts{}, Result{Outcome: Reset}), 0, yes, Retry},
		{"POST with Idempotency-Key", with(Facts{Written: true, IdempotencyKey: true}, StatusResult(503)), 0, yes, Retry},
	} {
		if got := Decide(&pol, tc.f, tc.retries, tc.budget); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	none := RetryPolicy{Attempts: NoRetries}.withDefaults()
	if Decide(&none, with(get, StatusResult(503)), 0, yes) != Stop || Decide(&none, Facts{Result: Result{Outcome: ConnectFailure}}, 0, yes) != Failover {
		t.Error("NoRetries")
	}
}

func TestParseRetryOn(t *testing.T) {
	on, err := ParseRetryOn([]string{"timeout", "5xx"})
	if err != nil || !on.Matches(Result{Outcome: Timeout}) || !on.Matches(StatusResult(599)) || on.Matches(StatusResult(499)) || on.Matches(Result{Outcome: Reset}) {
		t.Errorf("%v %+v", err, on)
	}
	for _, bad := range []string{"499", "600", "connect", "", "50x"} {
		if _, err := ParseRetryOn([]string{bad}); !errors.Is(err, ErrRetryOn) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

func TestStatusSet(t *testing.T) {
	for _, tc := range []struct {
		s       string
		in, out []int
		bad     bool
	}{
		{s: "200-399", in: []int{200, 302, 399}, out: []int{199, 400, 500}},
		{s: "200,204", in: []int{200, 204}, out: []int{201, 203, 205}},
		{s: " 200 - 299 , 304", in: []int{250, 304}, out: []int{300, 305}},
		{s: "100-599", in: []int{100, 599}, out: []int{99, 600, 0, -1}},
		{s: "", bad: true}, {s: "2xx", bad: true}, {s: "99", bad: true}, {s: "600", bad: true},
		{s: "300-200", bad: true}, {s: "200,", bad: true}, {s: "200-", bad: true},
	} {
		set, err := ParseStatusSet(tc.s)
		if (err != nil) != tc.bad {
			t.Errorf("%q: %v", tc.s, err)
			continue
		}
		for _, c := range tc.in {
			if !set.Has(c) {
				t.Errorf("%q lacks %d", tc.s, c)
			}
		}
		for _, c := range tc.out {
			if set.Has(c) {
				t.Errorf("%q has %d", tc.s, c)
			}
		}
	}
}

func TestBackoff(t *testing.T) {
	pol := RetryPolicy{Backoff: 10 * time.Millisecond}.withDefaults()
	for n, base := range map[int]time.Duration{1: 10, 2: 20, 3: 40, 4: 80, 5: 100, 50: 100} {
		base *= time.Millisecond
		for range 100 {
			if d := pol.BackoffFor(n); d < base/2 || d > base {
				t.Fatalf("retry %d: %v, want %v-%v", n, d, base/2, base)
			}
		}
	}
}

func TestTryDeadline(t *testing.T) {
	to := Timeouts{Try: 10 * time.Second, Total: 25 * time.Second}.withDefaults()
	start := time.Unix(1000, 0)
	for _, tc := range []struct {
		now  time.Duration
		want time.Duration
		ok   bool
	}{{0, 10 * time.Second, true}, {20 * time.Second, 25 * time.Second, true}, {25 * time.Second, 0, false}} {
		d, ok := to.TryDeadline(start, start.Add(tc.now))
		if ok != tc.ok || ok && d.Sub(start) != tc.want {
			t.Errorf("at %v: %v %v", tc.now, d.Sub(start), ok)
		}
	}
	if to.Connect != DefaultConnectTimeout || to.ResponseHeader != DefaultResponseHeaderTimeout {
		t.Errorf("defaults %+v", to)
	}
}

// TestBudgetFloor: with few requests in flight the floor allows 3
// concurrent retries; with many, the percentage.
func TestBudgetFloor(t *testing.T) {
	for _, tc := range []struct {
		inflight int64
		want     int
	}{{0, 3}, {1, 3}, {15, 3}, {20, 4}, {100, 20}, {1000, 200}} {
		b := Budget{Percent: 20, Min: 3}
		n := 0
		for range 1000 { // bounded: a broken budget must fail, not hang
			if !b.TryAcquire(tc.inflight) {
				break
			}
			n++
		}
		if n != tc.want {
			t.Errorf("%d in flight: %d retries, want %d", tc.inflight, n, tc.want)
		}
		b.Release()
		if !b.TryAcquire(tc.inflight) {
			t.Errorf("%d in flight: a released token is not available again", tc.inflight)
		}
	}
}

// TestOutageRetriesWithinBudget: during a full outage (every attempt 503)
// many concurrent requests want to retry; retries in flight never pass
// max(3, 20 % of requests in flight), and the first tries are not blocked.
func TestOutageRetriesWithinBudget(t *testing.T) {
	p := newPool(t, Options{Targets: specs(3), Retry: RetryPolicy{Attempts: 3}, Passive: PassiveOptions{Disabled: true}})
	const clients, rounds = 40, 50
	var peak, over atomic.Int64
	var retries atomic.Int64
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			var rs RetryState
			for range rounds {
				for {
					x, err := p.Select(nil, &rs.Tried)
					if err != nil {
						break
					}
					// Check the budget while this attempt is in flight.
					in := p.inflight()
					r := p.RetriesInFlight()
					if r > max(3, in*20/100+1) { // +1: counts move between the two loads
						over.Add(1)
					}
					for {
						pk := peak.Load()
						if r <= pk || peak.CompareAndSwap(pk, r) {
							break
						}
					}
					p.Done(x, StatusResult(503))
					if p.Decide(&rs, x, Facts{Result: StatusResult(503), Written: true, Idempotent: true, Replayable: true}) != Retry {
						break
					}
					retries.Add(1)
				}
				p.Finish(&rs)
			}
		})
	}
	wg.Wait()
	if over.Load() != 0 {
		t.Errorf("%d times retries in flight exceeded the budget", over.Load())
	}
	if retries.Load() == 0 || peak.Load() == 0 {
		t.Error("no retry was ever allowed")
	}
	if p.RetriesInFlight() != 0 || p.inflight() != 0 {
		t.Errorf("leaked: %d retries, %d attempts in flight", p.RetriesInFlight(), p.inflight())
	}
	t.Logf("%d retries for %d requests; peak %d retries in flight", retries.Load(), clients*rounds, peak.Load())
}

// TestRetryStateNoRepeat: retries go to targets not yet tried.
func TestRetryStateNoRepeat(t *testing.T) {
	p := newPool(t, Options{Targets: specs(3), Retry: RetryPolicy{Attempts: 5}})
	var rs RetryState
	seen := map[*Target]bool{}
	for i := 0; ; i++ {
		x, err := p.Select(nil, &rs.Tried)
		if errors.Is(err, ErrExhausted) {
			break
		}
		if err != nil || seen[x] {
			t.Fatalf("attempt %d: %v, repeat %v", i, err, seen[x])
		}
		seen[x] = true
		p.Done(x, Result{Outcome: Reset})
		if d := p.Decide(&rs, x, Facts{Result: Result{Outcome: Reset}}); d != Retry {
			t.Fatalf("attempt %d: %v", i, d)
		}
	}
	if len(seen) != 3 || rs.Retries != 3 {
		t.Errorf("%d targets, %d retries", len(seen), rs.Retries)
	}
	p.Finish(&rs)
	if p.RetriesInFlight() != 0 || rs.Tried.Len() != 0 {
		t.Error("Finish left state")
	}
}

func TestExcludeGrows(t *testing.T) {
	p := newPool(t, Options{Targets: specs(20)})
	var ex Exclude
	for i, x := range p.Targets() {
		ex.Add(x)
		ex.Add(x)
		if ex.Len() != i+1 || !ex.Has(x) {
			t.Fatalf("after %d: len %d", i, ex.Len())
		}
	}
	ex.Reset()
	if ex.Len() != 0 || ex.Has(p.Targets()[0]) || ex.Has(p.Targets()[15]) {
		t.Error("Reset")
	}
	var nilEx *Exclude
	if nilEx.Has(p.Targets()[0]) || nilEx.Len() != 0 {
		t.Error("nil Exclude")
	}
}

// TestSelectNext: a retry goes to another target where one exists, else
// to the same one; a failover never returns to a target that refused.
func TestSelectNext(t *testing.T) {
	one := newPool(t, Options{Targets: specs(1), Retry: RetryPolicy{Attempts: 2}})
	var rs RetryState
	x, _ := one.SelectNext(nil, &rs)
	one.Done(x, StatusResult(503))
	if d := one.Decide(&rs, x, Facts{Result: StatusResult(503)}); d != Retry {
		t.Fatal(d)
	}
	y, err := one.SelectNext(nil, &rs)
	if err != nil || y != x {
		t.Fatalf("retry in a one-target pool: %v %v", y, err)
	}
	one.Done(y, Result{Outcome: ConnectFailure})
	if d := one.Decide(&rs, y, Facts{Result: Result{Outcome: ConnectFailure}}); d != Failover {
		t.Fatal(d)
	}
	if _, err := one.SelectNext(nil, &rs); !errors.Is(err, ErrExhausted) {
		t.Fatalf("failover to the refusing target: %v", err)
	}
	one.Finish(&rs)

	// Three targets: A refuses, B answers 503, the retry goes to C, and a
	// second retry (all tried) to B, never A.
	p := newPool(t, Options{Targets: specs(3), Retry: RetryPolicy{Attempts: 3}})
	ts := p.Targets()
	step := func(want *Target, r Result, d Decision) {
		t.Helper()
		x, err := p.SelectNext(nil, &rs)
		if err != nil || want != nil && x != want {
			t.Fatalf("selected %v (%v), want %v", x, err, want)
		}
		p.Done(x, r)
		if got := p.Decide(&rs, x, Facts{Result: r}); got != d {
			t.Fatalf("decision %v, want %v", got, d)
		}
	}
	step(ts[0], Result{Outcome: ConnectFailure}, Failover)
	step(ts[1], StatusResult(503), Retry)
	step(ts[2], StatusResult(503), Retry)
	x, err = p.SelectNext(nil, &rs)
	if err != nil || x == ts[0] {
		t.Fatalf("retry after all tried: %v %v", x, err)
	}
	p.Done(x, StatusResult(200))
	p.Finish(&rs)
}

// TestOnChange: the engine hears of every availability change.
func TestOnChange(t *testing.T) {
	var mu sync.Mutex
	var got []string
	p := newPool(t, Options{Targets: specs(3), Passive: PassiveOptions{EjectFor: 10 * time.Millisecond},
		OnChange: func(x *Target) {
			mu.Lock()
			got = append(got, x.Address()+map[bool]string{true: " up", false: " down"}[x.Available()])
			mu.Unlock()
		}})
	x := p.Targets()[0]
	eject(t, p, x)
	// Wait for the return's notification, not for Available: the timer
	// clears the state before it calls OnChange, and a check applied in
	// between would be reported first.
	notified := func() int { mu.Lock(); defer mu.Unlock(); return len(got) }
	deadline := time.Now().Add(10 * time.Second)
	for notified() < 2 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	o := ActiveOptions{UnhealthyAfter: 1, HealthyAfter: 1}.withDefaults()
	p.applyCheck(x, false, o, 0, nil)
	p.applyCheck(x, false, o, 0, nil) // no change
	p.applyCheck(x, true, o, 0, nil)
	mu.Lock()
	defer mu.Unlock()
	a := x.Address()
	if strings.Join(got, ",") != strings.Join([]string{a + " down", a + " up", a + " down", a + " up"}, ",") {
		t.Errorf("changes %v", got)
	}
}

// TestOutageBudgetDeterministic: 100 requests in flight during a full
// outage all fail at once; only a budget's worth retry (20 % of those in
// flight, at least 3), not all 100.
func TestOutageBudgetDeterministic(t *testing.T) {
	p := newPool(t, Options{Targets: specs(3), Retry: RetryPolicy{Attempts: 3}, Passive: PassiveOptions{Disabled: true}})
	const n = 100
	var rs [n]RetryState
	var cur [n]*Target
	for i := range n {
		cur[i], _ = p.SelectNext(nil, &rs[i])
	}
	f := Facts{Result: StatusResult(503), Written: true, Idempotent: true, Replayable: true}
	retried := 0
	for i := range n {
		p.Done(cur[i], f.Result)
		// The budget is checked when a retry is admitted, against the
		// requests in flight then; requests that end later lower the
		// share without taking admitted retries back.
		in := p.inflight()
		d := p.Decide(&rs[i], cur[i], f)
		if r := p.RetriesInFlight(); d == Retry && r > max(3, in*20/100) {
			t.Fatalf("after %d failures: %d retries in flight for %d attempts", i+1, r, in)
		}
		if d == Retry {
			retried++
			cur[i], _ = p.SelectNext(nil, &rs[i]) // the retry is in flight
		} else {
			p.Finish(&rs[i])
			cur[i] = nil
		}
	}
	t.Logf("%d of %d failed requests retried", retried, n)
	if retried < 3 || retried > 25 {
		t.Errorf("%d of %d requests retried, want 3-25", retried, n)
	}
	for i := range n {
		if cur[i] != nil {
			p.Done(cur[i], StatusResult(200))
			p.Finish(&rs[i])
		}
	}
	if p.RetriesInFlight() != 0 || p.inflight() != 0 {
		t.Error("leak")
	}
}
