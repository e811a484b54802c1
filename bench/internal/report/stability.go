package report

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/simdedge/simdedge/bench/internal/stats"
)

// StableCI is the confidence-interval half-width (relative to the median)
// up to which a median counts as stable: benchstat reports a difference
// between two runs only when it exceeds the intervals, so with intervals
// of ±5 % a change of about 10 % is what two runs of the suite can tell
// apart. LooseCI is the next level the Stability line counts.
const (
	StableCI = 0.05
	LooseCI  = 0.10
)

// Thresholds of the per-round analysis: a sample counts as off when it is
// more than offRound from its row's median, and a round as disturbed for a
// whole group (an area's rows, or a scenario's servers) when its group
// factor (the median over the rows of sample / row median) is more than
// groupRound from 1.
const (
	offRound   = 0.05
	groupRound = 0.03
)

// ciEntry is one measured basis (a micro row's ratio basis, or a load
// row's CPU per request), the half-width of its median's 95 % interval,
// and why it is wide when that is known.
type ciEntry struct {
	name   string
	ci     float64
	reason string
}

// group is rows measured in the same rounds: a micro area or a load
// scenario. others are the other processes' CPUs busy per round, when
// known.
type group struct {
	label   string
	samples [][]float64
	others  []float64
}

// factors is the per-round median of sample / row median over the rows
// that have every round (NaN for a round with no such row).
func (g group) factors() []float64 {
	n := 0
	for _, s := range g.samples {
		n = max(n, len(s))
	}
	f := make([]float64, n)
	for i := range f {
		var devs []float64
		for _, s := range g.samples {
			if len(s) != n {
				continue
			}
			if m := stats.Summarize(s).Median; m != 0 {
				devs = append(devs, s[i]/m)
			}
		}
		f[i] = stats.Summarize(devs).Median
	}
	return f
}

// reason explains why samples (one row of g) have a wide interval: the
// rounds whose samples are off the median, and whether the whole group
// moved in those rounds (something outside the benchmark: other processes
// on the machine) or this row alone.
func (g group) reason(samples []float64, f []float64) string {
	m := stats.Summarize(samples).Median
	if m == 0 || math.IsNaN(m) {
		return ""
	}
	var off, shared []int
	for i, v := range samples {
		d := v/m - 1
		if math.Abs(d) <= offRound {
			continue
		}
		off = append(off, i)
		if len(f) == len(samples) && math.Abs(f[i]-1) > groupRound && (f[i] > 1) == (d > 0) {
			shared = append(shared, i)
		}
	}
	if len(off) == 0 {
		return ""
	}
	if 3*len(off) > len(samples) && 2*len(shared) < len(off) {
		// Not a few disturbed rounds: the row varies throughout.
		return fmt.Sprintf("broad: %d of %d rounds more than %.0f %% off the median, mostly this row alone", len(off), len(samples), offRound*100)
	}
	var b strings.Builder
	if len(shared) == len(off) {
		fmt.Fprintf(&b, "%s%s moved the whole %s (median row ×%s)", roundsWord(off), roundList(off), g.label, factorList(f, off))
		if o := g.othersNote(off); o != "" {
			b.WriteString("; " + o)
		}
		return b.String()
	}
	fmt.Fprintf(&b, "%s%s off the median", roundsWord(off), roundList(off))
	if len(shared) > 0 {
		fmt.Fprintf(&b, ", %s of them with the whole %s (×%s)", roundList(shared), g.label, factorList(f, shared))
	} else {
		b.WriteString(", this row alone")
	}
	return b.String()
}

// othersNote compares the other processes' CPU in the given rounds with
// the median round's.
func (g group) othersNote(rounds []int) string {
	if len(g.others) == 0 {
		return ""
	}
	med := stats.Summarize(g.others).Median
	var vals []string
	for _, i := range rounds {
		if i < len(g.others) {
			vals = append(vals, fmt.Sprintf("%.2f", g.others[i]))
		}
	}
	if len(vals) == 0 || math.IsNaN(med) {
		return ""
	}
	return fmt.Sprintf("other processes used %s CPUs then (median round %.2f)", strings.Join(vals, ", "), med)
}

// roundList numbers rounds from 1: "2, 10".
func roundList(rounds []int) string {
	var s []string
	for _, i := range rounds {
		s = append(s, fmt.Sprint(i+1))
	}
	return strings.Join(s, ", ")
}

// roundsWord is "round" or "rounds" before a roundList.
func roundsWord(rounds []int) string {
	if len(rounds) > 1 {
		return "rounds "
	}
	return "round "
}

func factorList(f []float64, rounds []int) string {
	var s []string
	for _, i := range rounds {
		s = append(s, fmt.Sprintf("%.2f", f[i]))
	}
	return strings.Join(s, ", ×")
}

// ciEntries lists every basis that has an interval, with a reason for the
// wide ones.
func (r *Report) ciEntries() (have []ciEntry, without int) {
	for _, m := range r.Micro {
		g := group{label: m.Area + " area", others: r.RoundOthers[m.Spec.Section]}
		for _, row := range m.Rows {
			g.samples = append(g.samples, row.Samples)
		}
		f := g.factors()
		for _, row := range m.Rows {
			if math.IsNaN(row.TimeCI) {
				without++
				continue
			}
			e := ciEntry{name: fmt.Sprintf("%s/%s/%s (%s)", m.Area, row.Case, implName(row.Impl), row.Basis), ci: row.TimeCI}
			if e.ci > StableCI {
				e.reason = g.reason(row.Samples, f)
			}
			have = append(have, e)
		}
	}
	for _, l := range r.Load {
		sums := l.Summaries()
		g := group{label: "load " + l.Kind + " scenario"}
		var others [][]float64
		for i, s := range sums {
			g.samples = append(g.samples, s.cpu)
			var o []float64
			for _, rd := range l.Rows[i].Rounds {
				if rd.Wall > 0 {
					o = append(o, float64(rd.Others)/float64(rd.Wall))
				}
			}
			others = append(others, o)
		}
		// A round's others: the median over its servers' runs.
		for i := 0; ; i++ {
			var v []float64
			for _, o := range others {
				if i < len(o) {
					v = append(v, o[i])
				}
			}
			if len(v) == 0 {
				break
			}
			g.others = append(g.others, stats.Summarize(v).Median)
		}
		f := g.factors()
		for i, s := range sums {
			if len(l.Rows[i].Rounds) == 0 {
				continue
			}
			if math.IsNaN(s.CPUCI) {
				without++
				continue
			}
			e := ciEntry{name: fmt.Sprintf("load %s/%s (CPU/req)", l.Kind, l.Rows[i].Server), ci: s.CPUCI}
			if e.ci > StableCI {
				e.reason = g.reason(s.cpu, f)
			}
			have = append(have, e)
		}
	}
	return have, without
}

// Stability says how steady the medians are: how many of the measured
// bases have a 95 % confidence interval on the median within ±StableCI
// and ±LooseCI, the median interval, and the widest ones by name with the
// rounds that made them wide.
func (r *Report) Stability() string {
	have, without := r.ciEntries()
	var b strings.Builder
	b.WriteString("**Stability.** ")
	if len(have) == 0 {
		fmt.Fprintf(&b, "Too few rounds for confidence intervals (benchstat needs 6 or more per row); %d rows measured.\n\n", without)
		return b.String()
	}
	stable, loose := 0, 0
	cis := make([]float64, len(have))
	for i, e := range have {
		cis[i] = e.ci
		if e.ci <= StableCI {
			stable++
		}
		if e.ci <= LooseCI {
			loose++
		}
	}
	slices.Sort(cis)
	fmt.Fprintf(&b, "Of %d medians, %d have a 95 %% confidence interval within ±%.0f %% and %d within ±%.0f %% (the basis column of each row; benchstat's ±); the median interval is ±%.1f %%.",
		len(have), stable, StableCI*100, loose, LooseCI*100, cis[len(cis)/2]*100)
	slices.SortFunc(have, func(a, b ciEntry) int {
		switch {
		case a.ci > b.ci:
			return -1
		case a.ci < b.ci:
			return 1
		}
		return strings.Compare(a.name, b.name)
	})
	var wide []string
	for _, e := range have {
		if e.ci <= StableCI || len(wide) == 8 {
			break
		}
		w := fmt.Sprintf("%s ±%.1f %%", e.name, e.ci*100)
		if e.reason != "" {
			w += " (" + e.reason + ")"
		}
		wide = append(wide, w)
	}
	if len(wide) > 0 {
		fmt.Fprintf(&b, " Widest: %s.", strings.Join(wide, "; "))
	}
	if without > 0 {
		fmt.Fprintf(&b, " %d rows had too few rounds for an interval.", without)
	}
	b.WriteString(" Every sample is kept, in the report and in the benchstat file; a round that moved a whole area or scenario points at the machine (other processes), not at the code measured.\n\n")
	return b.String()
}
