package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/simdedge/simdedge/bench/internal/stats"
)

// Pair names two rows of a load scenario (by server) whose per-round
// ratio the report gives beside the peer ratios: a policy against its
// baseline (p2c against round robin), or simdedge against nginx. The peer
// column answers "how many times faster than the peer"; a pair answers
// "how much more does Num cost than Den", the form a budget such as
// "within 3 % of the baseline" is written in.
type Pair struct {
	Num, Den string
}

// PairSummary is a pair's ratios, round by round: CPU per request
// Num ÷ Den (above 1: Num costs more) and requests/s Num ÷ Den.
type PairSummary struct {
	Pair
	// CPU and RPS are the per-round ratios.
	CPU, RPS []float64
	// CPUSum and RPSSum are their medians and min–max.
	CPUSum, RPSSum stats.Summary
	// CPUCI is the half-width of the 95 % confidence interval of the
	// median CPU ratio, relative to it (NaN under 6 rounds).
	CPUCI float64
	// Note says why there is no ratio.
	Note string
}

// PairSummaries computes the scenario's pairs from the rows' rounds.
// Rounds pair by index: within a round every row runs back to back, so a
// disturbance of the shared machine tends to hit both sides.
func (l Load) PairSummaries() []PairSummary {
	sums := l.Summaries()
	find := func(server string) (Summary, bool) {
		for i, r := range l.Rows {
			if r.Server == server && len(r.Rounds) > 0 {
				return sums[i], true
			}
		}
		return Summary{}, false
	}
	out := make([]PairSummary, 0, len(l.Pairs))
	for _, p := range l.Pairs {
		ps := PairSummary{Pair: p, CPUCI: math.NaN()}
		num, okNum := find(p.Num)
		den, okDen := find(p.Den)
		switch {
		case !okNum || !okDen:
			ps.Note = "a side did not run"
		default:
			ps.CPU, ps.RPS = stats.Paired(num.cpu, den.cpu), stats.Paired(num.rps, den.rps)
			if ps.CPU == nil {
				ps.Note = fmt.Sprintf("rounds differ (%d and %d): not paired", len(num.cpu), len(den.cpu))
			}
		}
		ps.CPUSum, ps.RPSSum = stats.Summarize(ps.CPU), stats.Summarize(ps.RPS)
		if ps.CPU != nil {
			ps.CPUCI = stats.CISpread(ps.CPU)
		}
		out = append(out, ps)
	}
	return out
}

// writePairs writes the pair table of a load scenario, if it has pairs.
func writePairs(b *strings.Builder, l Load) {
	if len(l.Pairs) == 0 {
		return
	}
	b.WriteString("Per-round ratios: in each round both rows ran back to back, so each round gives one ratio, and the median is over the rounds. CPU is the first row's CPU per request ÷ the second's (1.03: the first costs 3 % more); requests/s likewise.\n\n")
	b.WriteString("| rows | CPU/req ratio: median (min–max) | CPU change | CI95 | req/s ratio: median (min–max) | CPU ratio per round |\n")
	b.WriteString("|---|---:|---:|---:|---:|---|\n")
	for _, p := range l.PairSummaries() {
		name := p.Num + " ÷ " + p.Den
		if p.Note != "" {
			fmt.Fprintf(b, "| %s | n/a | | | | %s |\n", name, p.Note)
			continue
		}
		var rounds []string
		for _, v := range p.CPU {
			rounds = append(rounds, fmt.Sprintf("%.3f", v))
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s |\n", name,
			fmtCostRange(p.CPUSum), fmtChange(p.CPUSum.Median), fmtPct(p.CPUCI), fmtCostRange(p.RPSSum), strings.Join(rounds, " "))
	}
	b.WriteString("\n")
}

// fmtCostRange prints a median ratio with its min–max to three decimals
// (a 3 % budget needs more than fmtRatio's two).
func fmtCostRange(s stats.Summary) string {
	if s.N == 0 || math.IsNaN(s.Median) {
		return "n/a"
	}
	return fmt.Sprintf("%.3f (%.3f–%.3f)", s.Median, s.Min, s.Max)
}

// fmtChange prints a ratio as a signed change in percent.
func fmtChange(r float64) string {
	if math.IsNaN(r) {
		return "n/a"
	}
	return fmt.Sprintf("%+.1f %%", (r-1)*100)
}
