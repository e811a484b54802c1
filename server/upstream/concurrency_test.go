package upstream

import (
	"sync"
	"testing"
)

// TestConcurrentPolicies runs every policy from many goroutines while
// targets fail, get ejected, return and flip their active verdicts (run
// it with -race): nothing panics, selection succeeds and the in-flight
// counts return to zero.
func TestConcurrentPolicies(t *testing.T) {
	for _, b := range balances {
		t.Run(string(b), func(t *testing.T) {
			p := newPool(t, Options{Targets: specs(5, 1, 2, 3, 1, 1), Balance: b,
				Passive: PassiveOptions{ConsecutiveFailures: 3, EjectFor: 1e6 /* 1 ms */}})
			o := ActiveOptions{HealthyAfter: 1, UnhealthyAfter: 1}.withDefaults()
			var wg sync.WaitGroup
			wg.Go(func() { // one "checker" flips target 4
				for i := range 2000 {
					p.applyCheck(p.Targets()[4], i%2 == 0, o, 0, nil)
				}
			})
			for g := range 8 {
				wg.Go(func() {
					var rs RetryState
					key := []byte{byte(g), 0}
					for i := range 2000 {
						key[1] = byte(i)
						x, err := p.Select(key, &rs.Tried)
						if err != nil {
							t.Error(err)
							return
						}
						r := StatusResult(200)
						if x == p.Targets()[0] || i%7 == 0 {
							r = Result{Outcome: Reset}
						}
						p.Done(x, r)
						p.Decide(&rs, x, Facts{Result: r})
						p.Finish(&rs)
						_ = p.Snapshot(nil)
					}
				})
			}
			wg.Wait()
			if p.inflight() != 0 || p.RetriesInFlight() != 0 {
				t.Errorf("in flight %d, retries %d", p.inflight(), p.RetriesInFlight())
			}
		})
	}
}
