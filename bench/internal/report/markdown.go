package report

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/simdedge/simdedge/bench/internal/stats"
	"github.com/simdedge/simdedge/bench/internal/sysinfo"
)

// Report is everything one benchrun writes.
type Report struct {
	Info sysinfo.Info
	// SIMD is the asm dispatch level of this machine.
	SIMD       string
	Start, End time.Time
	// LoadStart and LoadEnd are /proc/loadavg at start and end.
	LoadStart, LoadEnd string
	Quick              bool
	Command            string
	// Settings describes counts, bench times and wrk flags.
	Settings []string
	Micro    []Micro
	Load     []Load
	// Notes are degradations (a peer that could not run, an area that
	// failed) and other remarks, shown near the top.
	Notes []string
	// Benchstat is the file name of the benchstat-format results.
	Benchstat string
	// RoundOthers holds, per micro section ("json"), the CPU that other
	// processes used during each round, in CPUs (0.5: half a CPU busy on
	// average), from /proc/stat less the benchmark binary's own time.
	RoundOthers map[string][]float64
}

// Plot is one SVG written beside the report.
type Plot struct{ Title, File string }

// WriteFiles writes <dir>/<base>.md and its plots <dir>/<base>-<name>.svg,
// and returns the Markdown path.
func (r *Report) WriteFiles(dir, base string) (string, error) {
	plots, err := r.writePlots(dir, base)
	if err != nil {
		return "", err
	}
	md := filepath.Join(dir, base+".md")
	f, err := os.Create(md)
	if err != nil {
		return "", err
	}
	if err := r.WriteMarkdown(f, plots); err != nil {
		f.Close()
		return "", err
	}
	return md, f.Close()
}

// WriteMarkdown writes the report, embedding plots by relative path.
func (r *Report) WriteMarkdown(w io.Writer, plots []Plot) error {
	var b strings.Builder
	mode := "full"
	if r.Quick {
		mode = "quick (few rounds: read the ratios, not the spreads)"
	}
	fmt.Fprintf(&b, "# simdedge benchmarks, %s on %s\n\n", r.Start.UTC().Format("2006-01-02 15:04 UTC"), r.Info.Host)
	fmt.Fprintf(&b, "> **Shared, noisy machine.** Other jobs ran during this run: load average %s at start, %s at end (1/5/15 min, %d CPUs). "+
		"Absolute numbers can be off by ±30 %%; the ratios compare implementations measured side by side in the same run and are the figures to quote.\n\n",
		orNA(r.LoadStart), orNA(r.LoadEnd), r.Info.CPUs)
	commit := r.Info.Commit
	if r.Info.Dirty {
		commit += " (with uncommitted changes)"
	}
	fmt.Fprintf(&b, "| | |\n|---|---|\n")
	fmt.Fprintf(&b, "| mode | %s |\n", mode)
	fmt.Fprintf(&b, "| command | `%s` |\n", r.Command)
	fmt.Fprintf(&b, "| duration | %s |\n", r.End.Sub(r.Start).Round(time.Second))
	fmt.Fprintf(&b, "| CPU | %s, %d CPUs |\n", orNA(r.Info.CPUModel), r.Info.CPUs)
	fmt.Fprintf(&b, "| CPU flags | %s |\n", orNA(strings.Join(r.Info.Flags, " ")))
	fmt.Fprintf(&b, "| simdedge SIMD level | %s |\n", orNA(r.SIMD))
	fmt.Fprintf(&b, "| kernel | %s |\n", orNA(r.Info.Kernel))
	fmt.Fprintf(&b, "| Go | %s |\n", r.Info.Go)
	fmt.Fprintf(&b, "| commit | %s |\n", orNA(commit))
	for _, s := range r.Settings {
		k, v, _ := strings.Cut(s, ": ")
		fmt.Fprintf(&b, "| %s | %s |\n", k, v)
	}
	if r.Benchstat != "" {
		fmt.Fprintf(&b, "| raw results | [`%s`](%s) (benchstat format: `go tool benchstat old.txt new.txt` inside bench/) |\n", r.Benchstat, r.Benchstat)
	}
	b.WriteString("\n")
	if len(r.Notes) > 0 {
		b.WriteString("## Notes\n\n")
		for _, n := range r.Notes {
			fmt.Fprintf(&b, "- %s\n", n)
		}
		b.WriteString("\n")
	}
	b.WriteString("## Summary\n\n")
	b.WriteString(r.SummaryTable())
	b.WriteString("\nRatios are medians over the rounds: peer time / our time for parsers and kernels, our requests/s / peer requests/s for servers; above 1 means faster than the peer. The range in brackets is the min–max of the per-round ratios (every round runs both sides back to back).\n\n")
	b.WriteString(r.Stability())
	for _, p := range plots {
		fmt.Fprintf(&b, "![%s](%s)\n\n", p.Title, p.File)
	}
	for _, m := range r.Micro {
		writeMicro(&b, m, r.RoundOthers[m.Spec.Section])
	}
	for _, l := range r.Load {
		writeLoad(&b, l)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// SummaryTable is the compact table for the README: simdedge's rows with
// their ratio to the area's peer, and the load ratios.
func (r *Report) SummaryTable() string {
	var b strings.Builder
	b.WriteString("| area | case | ours | median | × vs peer | peer |\n|---|---|---|---:|---:|---|\n")
	rows := 0
	for _, m := range r.Micro {
		if m.Spec.Compact {
			for _, impl := range m.Spec.Ours {
				var cases, meds, rats []string
				for _, row := range m.Rows {
					if row.Impl == impl {
						cases = append(cases, row.Case)
						meds = append(meds, fmtNs(row.Time.Median))
						rats = append(rats, fmtRatio(row.Speedup))
					}
				}
				if len(cases) > 0 {
					fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", m.Area, strings.Join(cases, " / "), implName(impl),
						strings.Join(meds, " / "), strings.Join(rats, " / "), m.Spec.Peer.Impl)
					rows++
				}
			}
			continue
		}
		for _, row := range m.Rows {
			if !slices.Contains(m.Spec.Ours, row.Impl) {
				continue
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s %s | %s | %s |\n", m.Area, row.Case, implName(row.Impl), fmtNs(row.Time.Median),
				basisNote(row.Basis), fmtRatioRange(row.Speedup, row.SpeedupLo, row.SpeedupHi), peerName(m))
			rows++
		}
	}
	for _, l := range r.Load {
		sums := l.Summaries()
		for i, row := range l.Rows {
			if row.Server == l.Peer {
				continue
			}
			s := sums[i]
			if len(row.Rounds) == 0 {
				fmt.Fprintf(&b, "| load %s | req/s | %s | n/a | n/a | %s (did not run: %s) |\n", l.Kind, row.Server, l.Peer, row.Note)
				rows++
				continue
			}
			fmt.Fprintf(&b, "| load %s | req/s | %s | %.0f/s | %s | %s |\n", l.Kind, row.Server, s.RPS.Median,
				fmtRatioRange(s.RPSRatio, s.RPSRatioLo, s.RPSRatioHi), l.Peer)
			fmt.Fprintf(&b, "| load %s | CPU/req | %s | %s µs | %s | %s |\n", l.Kind, row.Server, fmtFloat(s.CPUus.Median),
				fmtRatioRange(s.CPURatio, s.CPURatioLo, s.CPURatioHi), l.Peer)
			rows += 2
		}
	}
	if rows == 0 {
		b.WriteString("| (nothing ran) | | | | | |\n")
	}
	return b.String()
}

// basisNote marks a summary median measured in CPU time.
func basisNote(unit string) string {
	if strings.HasPrefix(unit, "cpu-") {
		return "(" + unit + ")"
	}
	return ""
}

// implName names a row's implementation; a benchmark without an
// implementation level (BenchmarkURLParseAlloc/<corpus>) measures simdedge
// alone.
func implName(impl string) string {
	if impl == "" {
		return "simdedge"
	}
	return impl
}

func peerName(m Micro) string {
	if m.Spec.Peer.Area != m.Area {
		return m.Spec.Peer.Area + "/" + m.Spec.Peer.Impl
	}
	return m.Spec.Peer.Impl
}

func writeMicro(b *strings.Builder, m Micro, others []float64) {
	fmt.Fprintf(b, "## %s\n\n", m.Area)
	hasPeer := m.Spec.Peer.Impl != ""
	if hasPeer {
		fmt.Fprintf(b, "Peer: `%s`. ", peerName(m))
	} else {
		ref := m.Spec.Reference
		if ref == "" {
			ref = "a measurement without a peer in this table"
		}
		fmt.Fprintf(b, "No peer: %s. ", ref)
	}
	b.WriteString("ns/op and MB/s are medians; ± is half the min–max range over the median, CI95 the half-width of the median's 95 % confidence interval (benchstat's ±).")
	if hasPeer {
		b.WriteString(" The ratio is taken on the basis column: process CPU time per op where the benchmark and its peer report it (steady on a shared machine), wall ns/op otherwise.")
	}
	if len(others) > 0 {
		var v []string
		for _, o := range others {
			v = append(v, fmt.Sprintf("%.2f", o))
		}
		fmt.Fprintf(b, " Other processes' CPU during the area's rounds, in CPUs (from /proc/stat, less the benchmark binary's own time): %s.", strings.Join(v, " "))
	}
	b.WriteString("\n\n")
	var extra []string
	for _, row := range m.Rows {
		for u := range row.Extra {
			if !slices.Contains(extra, u) {
				extra = append(extra, u)
			}
		}
	}
	slices.Sort(extra)
	b.WriteString("| case | impl | ns/op | ± | MB/s | B/op | allocs/op |")
	for _, u := range extra {
		fmt.Fprintf(b, " %s |", u)
	}
	b.WriteString(" basis | basis ± | basis CI95 |")
	if hasPeer {
		b.WriteString(" × vs peer (per-round min–max) |")
	}
	b.WriteString("\n|---|---|---:|---:|---:|---:|---:|")
	for range extra {
		b.WriteString("---:|")
	}
	b.WriteString("---|---:|---:|")
	if hasPeer {
		b.WriteString("---:|")
	}
	b.WriteString("\n")
	for _, row := range m.Rows {
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s |", row.Case, implName(row.Impl), fmtNs(row.NsOp.Median),
			fmtPct(row.NsOp.Spread()), fmtFloat(row.MBs.Median), fmtFloat(row.BytesOp), fmtFloat(row.AllocsOp))
		for _, u := range extra {
			v, ok := row.Extra[u]
			if !ok {
				v = math.NaN()
			}
			fmt.Fprintf(b, " %s |", fmtFloat(v))
		}
		fmt.Fprintf(b, " %s | %s | %s |", row.Basis, fmtPct(row.Time.Spread()), fmtPct(row.TimeCI))
		if hasPeer {
			fmt.Fprintf(b, " %s |", fmtRatioRange(row.Speedup, row.SpeedupLo, row.SpeedupHi))
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
}

func writeLoad(b *strings.Builder, l Load) {
	fmt.Fprintf(b, "## Load: %s\n\n%s Peer for ratios: `%s`. Latency and CPU time are medians over the rounds; CPU is the server's user+system time per completed request (from /proc/PID/stat, process and children). On a shared machine requests/s depends on how much CPU the scheduler gave the server during its round; CPU time per request depends much less on that and is the steadier comparison.\n\n", l.Kind, l.Setup, l.Peer)
	backend := l.Backend != ""
	b.WriteString("| server | req/s | ± | p50 | p75 | p90 | p99 | CPU µs/req | CPU CI95 | req/s × vs peer (per-round min–max) | CPU × vs peer (per-round min–max) | wrk CPU µs/req |")
	if backend {
		b.WriteString(" backend CPU µs/req |")
	}
	b.WriteString(" client CPU busy | others' CPU | rounds | errors |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	if backend {
		b.WriteString("---:|")
	}
	b.WriteString("---:|---:|---:|---|\n")
	partial := false
	for i, s := range l.Summaries() {
		row := l.Rows[i]
		if len(row.Rounds) == 0 {
			fmt.Fprintf(b, "| %s | n/a |%s 0 | did not run: %s |\n", row.Server, strings.Repeat(" |", 12+boolInt(backend)), row.Note)
			continue
		}
		errs := "0"
		if s.Errors > 0 || s.Non2xx > 0 {
			errs = fmt.Sprintf("%d socket, %d non-2xx", s.Errors, s.Non2xx)
		}
		fmt.Fprintf(b, "| %s | %.0f | %s |", row.Server, s.RPS.Median, fmtPct(s.RPS.Spread()))
		for _, p := range Percentiles {
			cell := fmtUs(s.Latency[p].Median)
			if n := s.LatencyRounds[p]; n < len(row.Rounds) {
				partial = true
				cell += fmt.Sprintf(" (%d of %d rounds)", n, len(row.Rounds))
			}
			fmt.Fprintf(b, " %s |", cell)
		}
		fmt.Fprintf(b, " %s | %s | %s | %s | %s |", fmtFloat(s.CPUus.Median), fmtPct(s.CPUCI),
			fmtRatioRange(s.RPSRatio, s.RPSRatioLo, s.RPSRatioHi), fmtRatioRange(s.CPURatio, s.CPURatioLo, s.CPURatioHi), fmtFloat(s.WrkCPUus.Median))
		if backend {
			fmt.Fprintf(b, " %s |", fmtFloat(s.BackendCPUus.Median))
		}
		fmt.Fprintf(b, " %s | %s | %d | %s |\n", fmtBusy(s.ClientBusy), fmtBusy(s.Others), len(row.Rounds), errs)
	}
	b.WriteString("\nwrk CPU is wrk's own user+system time per completed request (os.clock in its done() hook, before the histogram dump; its exit rusage when the hook did not run)")
	if backend {
		fmt.Fprintf(b, ", backend CPU the backend's (%s, /proc/PID/stat)", l.Backend)
	}
	b.WriteString(". Client CPU busy is the median fraction of the client CPU that wrk")
	if backend {
		b.WriteString(" and the backend")
	}
	b.WriteString(" used during a round (min–max over the rounds): near 100 % the client side, not the server, set the rate, and a faster server cannot show more requests/s; CPU per request stays comparable. Others' CPU is what every other process on the machine took during the round, in CPUs (all CPUs' busy time from /proc/stat less the server's, wrk's and the backend's).\n\n")
	if partial {
		b.WriteString("A percentile marked (n of m rounds) was missing in the other rounds: wrk printed 0 for it (its coordinated-omission correction loses the counts it adds below the smallest latency) and no histogram dump replaced it; the median is over the rounds that gave it.\n\n")
	}
	writePairs(b, l)
}

func boolInt(v bool) int {
	if v {
		return 1
	}
	return 0
}

// fmtBusy prints a median fraction of a CPU with its min–max.
func fmtBusy(s stats.Summary) string {
	if s.N == 0 || math.IsNaN(s.Median) {
		return "–"
	}
	return fmt.Sprintf("%.0f %% (%.0f–%.0f)", s.Median*100, s.Min*100, s.Max*100)
}

func orNA(s string) string {
	if s == "" {
		return "n/a"
	}
	return s
}

func fmtRatio(v float64) string {
	if math.IsNaN(v) {
		return "n/a"
	}
	return fmt.Sprintf("%.2f×", v)
}

func fmtRatioRange(v, lo, hi float64) string {
	if math.IsNaN(v) {
		return "n/a"
	}
	if math.IsNaN(lo) || math.IsNaN(hi) {
		return fmtRatio(v)
	}
	return fmt.Sprintf("%.2f× (%.2f–%.2f)", v, lo, hi)
}

func fmtPct(f float64) string {
	if math.IsNaN(f) {
		return "n/a"
	}
	return fmt.Sprintf("%.1f%%", f*100)
}

// fmtNs prints a time in nanoseconds with a readable unit.
func fmtNs(ns float64) string {
	switch {
	case math.IsNaN(ns):
		return "n/a"
	case ns >= 1e6:
		return fmt.Sprintf("%.2f ms", ns/1e6)
	case ns >= 1e3:
		return fmt.Sprintf("%.2f µs", ns/1e3)
	default:
		return fmt.Sprintf("%.3g ns", ns)
	}
}

func fmtUs(us float64) string { return fmtNs(us * 1e3) }

func fmtFloat(v float64) string {
	switch {
	case math.IsNaN(v):
		return "–"
	case v == math.Trunc(v) && math.Abs(v) < 1e15:
		return fmt.Sprintf("%.0f", v)
	case math.Abs(v) >= 100:
		return fmt.Sprintf("%.0f", v)
	default:
		return fmt.Sprintf("%.3g", v)
	}
}
