package upstream

import (
	"errors"
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
		for b.TryAcquire(tc.inflight) {
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
