package report

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/simdedge/simdedge/bench/internal/gobench"
)

// balanceLoad is a balance scenario's rounds: p2c costs 2 % more CPU per
// request than rr in every round although round 2 is disturbed for both,
// and nginx missed a round.
func balanceLoad(t *testing.T) Load {
	w := wrkResult(t)
	at := func(rps float64, cpu time.Duration) Round {
		r := w
		r.RPS = rps
		r.Requests = 1_000_000
		return Round{Wrk: r, CPU: cpu}
	}
	return Load{Kind: "balance", Peer: "simdedge-rr",
		Pairs: []Pair{{Num: "simdedge-p2c", Den: "simdedge-rr"}, {Num: "simdedge-rr", Den: "nginx"}, {Num: "simdedge-rr", Den: "absent"}},
		Rows: []LoadRow{
			{Server: "simdedge-rr", Bench: "proxy=simdedge/policy=rr",
				Rounds: []Round{at(1000, 10*time.Second), at(500, 20*time.Second), at(1000, 10*time.Second)}},
			{Server: "simdedge-p2c", Bench: "proxy=simdedge/policy=p2c",
				Rounds: []Round{at(980, 10200*time.Millisecond), at(490, 20400*time.Millisecond), at(980, 10200*time.Millisecond)}},
			{Server: "nginx", Rounds: []Round{at(1000, 10*time.Second)}},
		}}
}

func TestPairSummaries(t *testing.T) {
	ps := balanceLoad(t).PairSummaries()
	if len(ps) != 3 {
		t.Fatalf("pairs = %d, want 3", len(ps))
	}
	p := ps[0]
	if p.Note != "" || len(p.CPU) != 3 {
		t.Fatalf("p2c ÷ rr: note %q, %d ratios", p.Note, len(p.CPU))
	}
	// Paired per round, the disturbed round gives the same 1.02.
	if math.Abs(p.CPUSum.Min-1.02) > 1e-9 || math.Abs(p.CPUSum.Max-1.02) > 1e-9 {
		t.Errorf("CPU ratio range %v–%v, want 1.02–1.02", p.CPUSum.Min, p.CPUSum.Max)
	}
	if math.Abs(p.RPSSum.Median-0.98) > 1e-9 {
		t.Errorf("req/s ratio %v, want 0.98", p.RPSSum.Median)
	}
	if !math.IsNaN(p.CPUCI) {
		t.Errorf("CI from 3 rounds = %v, want NaN", p.CPUCI)
	}
	if ps[1].Note == "" || ps[1].CPU != nil {
		t.Errorf("rr ÷ nginx with 3 and 1 rounds paired: %+v", ps[1])
	}
	if ps[2].Note != "a side did not run" {
		t.Errorf("pair with a missing row: note %q", ps[2].Note)
	}
}

func TestWritePairs(t *testing.T) {
	var b strings.Builder
	writeLoad(&b, balanceLoad(t))
	s := b.String()
	for _, want := range []string{
		"| simdedge-p2c ÷ simdedge-rr | 1.020 (1.020–1.020) | +2.0 % | n/a | 0.980 (0.980–0.980) | 1.020 1.020 1.020 |",
		"| simdedge-rr ÷ nginx | n/a | | | | rounds differ (3 and 1): not paired |",
		"| simdedge-rr ÷ absent | n/a | | | | a side did not run |",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("load section lacks %q:\n%s", want, s)
		}
	}
	b.Reset()
	writeLoad(&b, testLoad(t))
	if strings.Contains(b.String(), "Per-round ratios") {
		t.Errorf("a scenario without pairs has a pair table")
	}
}

// TestWriteBenchstatBenchNames: a row's Bench names its lines, so that
// benchstat -col /policy finds the policies; rows without one keep the
// server name.
func TestWriteBenchstatBenchNames(t *testing.T) {
	var b bytes.Buffer
	if err := balanceLoad(t).WriteBenchstat(&b); err != nil {
		t.Fatal(err)
	}
	names := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		r, err := gobench.ParseLine(line)
		if err != nil {
			t.Fatalf("line does not parse: %v\n%s", err, line)
		}
		names[r.Name]++
	}
	want := map[string]int{
		"BenchmarkLoad/balance/proxy=simdedge/policy=rr":  3,
		"BenchmarkLoad/balance/proxy=simdedge/policy=p2c": 3,
		"BenchmarkLoad/balance/nginx":                     1,
	}
	for n, c := range want {
		if names[n] != c {
			t.Errorf("%s: %d lines, want %d (all: %v)", n, names[n], c, names)
		}
	}
}
