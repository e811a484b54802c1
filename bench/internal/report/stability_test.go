package report

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/simdedge/simdedge/bench/internal/wrkout"
)

func TestStability(t *testing.T) {
	r := &Report{Micro: []Micro{{Area: "JSON", Rows: []MicroRow{
		{Case: "twitter", Impl: "simdedge", Basis: "cpu-ns/op", TimeCI: 0.02},
		{Case: "twitter", Impl: "encoding_json", Basis: "cpu-ns/op", TimeCI: 0.12},
		{Case: "canada", Impl: "simdedge", Basis: "cpu-ns/op", TimeCI: 0.05},
		{Case: "citm", Impl: "simdedge", Basis: "cpu-ns/op", TimeCI: 0.08},
		{Case: "canada", Impl: "encoding_json", Basis: "cpu-ns/op", TimeCI: math.NaN()},
	}}}}
	got := r.Stability()
	for _, want := range []string{
		"Of 4 medians, 2 have a 95 % confidence interval within ±5 % and 3 within ±10 %", "median interval is ±8.0 %",
		"Widest: JSON/twitter/encoding_json (cpu-ns/op) ±12.0 %; JSON/citm/simdedge (cpu-ns/op) ±8.0 %.",
		"1 rows had too few rounds",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("Stability() lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "canada/simdedge") {
		t.Errorf("a row at the threshold is listed as wide:\n%s", got)
	}
	empty := (&Report{Micro: []Micro{{Area: "A", Rows: []MicroRow{{TimeCI: math.NaN()}}}}}).Stability()
	if !strings.Contains(empty, "Too few rounds") {
		t.Errorf("no intervals: %s", empty)
	}
}

// The full run's JSON pattern: rounds 2 and 10 slow for every row (a
// whole-round disturbance), and one row that varies alone.
func TestStabilityReasons(t *testing.T) {
	base := []float64{100, 100, 101, 99, 100, 100, 102, 98, 100, 100}
	scale := func(f float64, slow map[int]float64) []float64 {
		out := make([]float64, len(base))
		for i, v := range base {
			out[i] = v * f
			if k, ok := slow[i]; ok {
				out[i] *= k
			}
		}
		return out
	}
	round := map[int]float64{1: 1.2, 9: 1.5}
	rows := []MicroRow{
		{Case: "canada", Impl: "simdedge", Samples: scale(1, round)},
		{Case: "canada", Impl: "fastjson", Samples: scale(3, round)},
		{Case: "twitter", Impl: "simdedge", Samples: scale(2, round)},
		{Case: "twitter", Impl: "fastjson", Samples: scale(5, map[int]float64{1: 1.2, 9: 1.5, 4: 1.3})},
		{Case: "citm", Impl: "simdedge", Samples: scale(4, map[int]float64{1: 1.2, 9: 1.5, 4: 0.8, 6: 0.8})},
		{Case: "canada", Impl: "encoding_json", Samples: scale(4, map[int]float64{0: 1.1, 2: 0.9, 3: 1.1, 5: 0.9, 6: 1.1})},
	}
	for i := range rows {
		rows[i].Basis = "cpu-ns/op"
		rows[i].TimeCI = 0.2
	}
	others := []float64{0.1, 0.9, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 1.1}
	r := &Report{Micro: []Micro{{Area: "JSON", Spec: AreaSpec{Section: "json"}, Rows: rows}},
		RoundOthers: map[string][]float64{"json": others}}
	got := r.Stability()
	for _, want := range []string{
		"JSON/canada/simdedge (cpu-ns/op) ±20.0 % (rounds 2, 10 moved the whole JSON area (median row ×1.20, ×1.50); other processes used 0.90, 1.10 CPUs then (median round 0.10))",
		"JSON/twitter/fastjson (cpu-ns/op) ±20.0 % (rounds 2, 5, 10 off the median, 2, 10 of them with the whole JSON area",
		"JSON/canada/encoding_json (cpu-ns/op) ±20.0 % (broad: 5 of 10 rounds more than 5 % off the median, mostly this row alone)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("Stability() lacks %q:\n%s", want, got)
		}
	}
}

// Load rows: the CPU per request of the servers measured in the same
// rounds, and the others' CPU from the rounds.
func TestStabilityLoad(t *testing.T) {
	mk := func(cpu []time.Duration, others time.Duration) []Round {
		var rs []Round
		for i, c := range cpu {
			o := time.Duration(0)
			if i == 3 {
				o = others
			}
			rs = append(rs, Round{Wrk: wrkout.Result{Requests: 1000, RPS: 100}, CPU: c * 1000, Wall: time.Second, Others: o})
		}
		return rs
	}
	us := time.Microsecond
	a := []time.Duration{10 * us, 10 * us, 10 * us, 15 * us, 10 * us, 10 * us, 10 * us, 10 * us}
	b := []time.Duration{20 * us, 20 * us, 20 * us, 30 * us, 20 * us, 20 * us, 20 * us, 20 * us}
	r := &Report{Load: []Load{{Kind: "origin", Peer: "b", Rows: []LoadRow{
		{Server: "a", Rounds: mk(a, 800*time.Millisecond)}, {Server: "b", Rounds: mk(b, 800*time.Millisecond)}}}}}
	got := r.Stability()
	if !strings.Contains(got, "load origin/a (CPU/req)") || !strings.Contains(got, "round 4 moved the whole load origin scenario (median row ×1.50); other processes used 0.80 CPUs then (median round 0.00)") {
		t.Errorf("Stability():\n%s", got)
	}
}
