package report

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// StableCI is the confidence-interval half-width (relative to the median)
// up to which a median counts as stable: benchstat reports a difference
// between two runs only when it exceeds the intervals, so with intervals
// of ±5 % a change of about 10 % is what two runs of the suite can tell
// apart.
const StableCI = 0.05

// ciEntry is one measured basis (a micro row's ratio basis, or a load
// row's CPU per request) and the half-width of its median's 95 % interval.
type ciEntry struct {
	name string
	ci   float64
}

// ciEntries lists every basis that has an interval.
func (r *Report) ciEntries() (have []ciEntry, without int) {
	for _, m := range r.Micro {
		for _, row := range m.Rows {
			if math.IsNaN(row.TimeCI) {
				without++
				continue
			}
			have = append(have, ciEntry{fmt.Sprintf("%s/%s/%s (%s)", m.Area, row.Case, implName(row.Impl), row.Basis), row.TimeCI})
		}
	}
	for _, l := range r.Load {
		for i, s := range l.Summaries() {
			if len(l.Rows[i].Rounds) == 0 {
				continue
			}
			if math.IsNaN(s.CPUCI) {
				without++
				continue
			}
			have = append(have, ciEntry{fmt.Sprintf("load %s/%s (CPU/req)", l.Kind, l.Rows[i].Server), s.CPUCI})
		}
	}
	return have, without
}

// Stability says how steady the medians are: how many of the measured
// bases have a 95 % confidence interval on the median within ±StableCI,
// the median interval, and the widest ones by name.
func (r *Report) Stability() string {
	have, without := r.ciEntries()
	var b strings.Builder
	b.WriteString("**Stability.** ")
	if len(have) == 0 {
		fmt.Fprintf(&b, "Too few rounds for confidence intervals (benchstat needs 6 or more per row); %d rows measured.\n\n", without)
		return b.String()
	}
	stable := 0
	cis := make([]float64, len(have))
	for i, e := range have {
		cis[i] = e.ci
		if e.ci <= StableCI {
			stable++
		}
	}
	slices.Sort(cis)
	fmt.Fprintf(&b, "%d of %d medians have a 95 %% confidence interval within ±%.0f %% (the basis column of each row; benchstat's ±); the median interval is ±%.1f %%.",
		stable, len(have), StableCI*100, cis[len(cis)/2]*100)
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
		wide = append(wide, fmt.Sprintf("%s ±%.1f %%", e.name, e.ci*100))
	}
	if len(wide) > 0 {
		fmt.Fprintf(&b, " Widest: %s.", strings.Join(wide, "; "))
	}
	if without > 0 {
		fmt.Fprintf(&b, " %d rows had too few rounds for an interval.", without)
	}
	b.WriteString("\n\n")
	return b.String()
}
