package report

import (
	"math"
	"slices"
	"strings"

	"github.com/simdedge/simdedge/bench/internal/gobench"
	"github.com/simdedge/simdedge/bench/internal/stats"
)

// PeerRef names the row a micro benchmark row is compared with: the
// implementation Impl in the same case of Area ("" = the row's own area).
type PeerRef struct{ Area, Impl string }

// AreaSpec says how an area is reported.
type AreaSpec struct {
	// Section groups areas into one plot and one part of the report
	// ("url", "http", "json", "asm").
	Section string
	// Peer is the row each row is compared with.
	Peer PeerRef
	// Ours lists the implementations shown in the summary table.
	Ours []string
	// Compact puts all cases of an implementation on one summary line
	// (the asm kernels, whose cases are input sizes).
	Compact bool
	// Reference, for an area without a peer (Peer.Impl ""), says what the
	// area measures and where its figures are compared instead; the
	// section then prints it in place of a peer and no ratio column.
	Reference string
}

// Micro is one micro-benchmark area (a top-level Benchmark function).
type Micro struct {
	Area string
	Spec AreaSpec
	Rows []MicroRow
}

// MicroRow is one case/implementation pair over all its -count runs.
type MicroRow struct {
	Case, Impl string
	NsOp       stats.Summary
	MBs        stats.Summary
	// BytesOp and AllocsOp are medians (they rarely vary).
	BytesOp, AllocsOp float64
	// Extra holds b.ReportMetric units (e.g. "ns/URL") by median.
	Extra map[string]float64
	// Basis is the time unit the ratio is taken on: a CPU-time unit
	// ("cpu-ns/op", "cpu-ns/URL") when the row and its peer both report
	// one, else "ns/op". Time is that unit's summary over the rounds.
	Basis string
	Time  stats.Summary
	// TimeCI is the half-width of the 95 % confidence interval of Time's
	// median, relative to it (benchstat's "±"); NaN with under 6 rounds.
	TimeCI float64
	// Speedup is the peer's Time over this row's (medians). SpeedupLo and
	// SpeedupHi are the min–max of the per-round ratios (each round runs
	// both back to back), or, when the rounds cannot be paired, the worst
	// and best pairing of the two min–max ranges.
	Speedup, SpeedupLo, SpeedupHi float64
	// Samples are the basis unit's values in round order (for the
	// Stability line's per-round analysis).
	Samples []float64
}

// basis picks the time unit two sample sets are compared on. Process CPU
// time per op is preferred: on the shared machine wall time per op swings
// by 2-3x with other tenants' load, while the CPU the benchmark itself
// used varies by a few percent. Wall time is the fallback for benchmarks
// (and peers) that do not report CPU time.
func basis(a, b map[string][]float64) string {
	var units []string
	for u := range a {
		if strings.HasPrefix(u, "cpu-ns/") && len(b[u]) > 0 {
			units = append(units, u)
		}
	}
	if len(units) == 0 {
		return "ns/op"
	}
	slices.Sort(units)
	return units[0]
}

// standardUnits are reported in their own columns.
var standardUnits = map[string]bool{"ns/op": true, "MB/s": true, "B/op": true, "allocs/op": true}

// GroupMicro groups results by area, then case and implementation, in
// first-seen order, and fills each row's speed-up against specs[area].Peer.
// Areas without a spec, or whose peer did not run, get NaN ratios.
func GroupMicro(results []gobench.Result, specs map[string]AreaSpec) []Micro {
	type key struct{ area, cse, impl string }
	samples := map[key]map[string][]float64{}
	var areas []string
	rowsOf := map[string][]key{}
	for _, r := range results {
		a, c, i := gobench.Parts(r.Name)
		k := key{a, c, i}
		m, ok := samples[k]
		if !ok {
			m = map[string][]float64{}
			samples[k] = m
			if _, seen := rowsOf[a]; !seen {
				areas = append(areas, a)
			}
			rowsOf[a] = append(rowsOf[a], k)
		}
		for u, v := range r.Metrics {
			m[u] = append(m[u], v)
		}
	}
	summary := func(k key, unit string) stats.Summary { return stats.Summarize(samples[k][unit]) }
	var out []Micro
	for _, a := range areas {
		spec, havePeer := specs[a]
		havePeer = havePeer && spec.Peer.Impl != ""
		if spec.Peer.Area == "" {
			spec.Peer.Area = a
		}
		p := spec.Peer
		g := Micro{Area: a, Spec: spec}
		for _, k := range rowsOf[a] {
			row := MicroRow{
				Case: k.cse, Impl: k.impl,
				NsOp:     summary(k, "ns/op"),
				MBs:      summary(k, "MB/s"),
				BytesOp:  summary(k, "B/op").Median,
				AllocsOp: summary(k, "allocs/op").Median,
				Extra:    map[string]float64{},
			}
			for u := range samples[k] {
				if !standardUnits[u] {
					row.Extra[u] = summary(k, u).Median
				}
			}
			row.Speedup, row.SpeedupLo, row.SpeedupHi = math.NaN(), math.NaN(), math.NaN()
			row.Basis = basis(samples[k], samples[k])
			if havePeer {
				pk := key{p.Area, k.cse, p.Impl}
				if _, ok := samples[pk]; ok {
					row.Basis = basis(samples[k], samples[pk])
					ps := summary(pk, row.Basis)
					t := summary(k, row.Basis)
					row.Speedup = stats.Ratio(ps.Median, t.Median)
					row.SpeedupLo = stats.Ratio(ps.Min, t.Max)
					row.SpeedupHi = stats.Ratio(ps.Max, t.Min)
					if pr := stats.Summarize(stats.Paired(samples[pk][row.Basis], samples[k][row.Basis])); pr.N > 0 {
						row.SpeedupLo, row.SpeedupHi = pr.Min, pr.Max
					}
				}
			}
			row.Time = summary(k, row.Basis)
			row.TimeCI = stats.CISpread(samples[k][row.Basis])
			row.Samples = samples[k][row.Basis]
			g.Rows = append(g.Rows, row)
		}
		out = append(out, g)
	}
	return out
}
