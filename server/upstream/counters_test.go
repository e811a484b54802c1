package upstream

import "testing"

// TestCounters: responses by status class and failures by kind per target,
// retries and budget refusals per pool; the counts survive a reload.
func TestCounters(t *testing.T) {
	p := newPool(t, Options{Targets: specs(2, 1, 1), Retry: RetryPolicy{BudgetPercent: 1, MinConcurrent: 1}})
	get := Facts{Result: StatusResult(503), Idempotent: true, Replayable: true, Written: true}
	var rs1, rs2 RetryState
	x, err := p.Select(nil, &rs1.Tried)
	if err != nil {
		t.Fatal(err)
	}
	p.Done(x, StatusResult(503))
	if d := p.Decide(&rs1, x, get); d != Retry {
		t.Fatalf("first 503: %v, want Retry", d)
	}
	y, err := p.Select(nil, &rs2.Tried)
	if err != nil {
		t.Fatal(err)
	}
	p.Done(y, StatusResult(503))
	if d := p.Decide(&rs2, y, get); d != Stop {
		t.Fatalf("second 503 with the budget's one token held: %v, want Stop", d)
	}
	p.Finish(&rs1)
	p.Finish(&rs2)
	z, err := p.Select(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	p.Done(z, Result{Outcome: ConnectFailure})
	w, err := p.Select(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	p.Done(w, StatusResult(204))

	check := func(p *Pool) {
		t.Helper()
		var sum TargetState
		for _, s := range p.Snapshot(nil) {
			for i := range s.ByClass {
				sum.ByClass[i] += s.ByClass[i]
			}
			for i := range s.ByOutcome {
				sum.ByOutcome[i] += s.ByOutcome[i]
			}
		}
		if sum.ByClass[5] != 2 || sum.ByClass[2] != 1 || sum.ByOutcome[Response] != 3 || sum.ByOutcome[ConnectFailure] != 1 || sum.ByOutcome[Reset] != 0 {
			t.Errorf("by class %v, by outcome %v", sum.ByClass, sum.ByOutcome)
		}
		if p.Retries() != 1 || p.BudgetRefusals() != 1 {
			t.Errorf("retries %d, budget refusals %d; want 1, 1", p.Retries(), p.BudgetRefusals())
		}
	}
	check(p)
	next := newPool(t, Options{Targets: specs(2, 1, 1), Previous: p})
	check(next)
}
