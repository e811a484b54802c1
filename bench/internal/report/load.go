package report

import (
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/simdedge/simdedge/bench/internal/stats"
	"github.com/simdedge/simdedge/bench/internal/wrkout"
)

// Percentiles are the latency percentiles wrk --latency prints.
var Percentiles = []float64{50, 75, 90, 99}

// Round is one wrk run against one server.
type Round struct {
	Wrk wrkout.Result
	// CPU is the server's (process tree's) user+system CPU time during the
	// run.
	CPU time.Duration
	// WrkCPU is wrk's own CPU time for the run, and BackendCPU the proxy
	// backend's (0 for origins): both share the client CPU, so together
	// they show how close the rig itself came to its ceiling.
	WrkCPU, BackendCPU time.Duration
	// Wall is the wall time of the round (wrk's run).
	Wall time.Duration
	// Others is the CPU time every other process on the machine took
	// during the round (all CPUs' busy time less the server's, wrk's and
	// the backend's); negative rounding is clamped to 0.
	Others time.Duration
}

// perRequest divides d by the round's completed requests.
func (r Round) perRequest(d time.Duration) time.Duration {
	if r.Wrk.Requests == 0 {
		return 0
	}
	return d / time.Duration(r.Wrk.Requests)
}

// ClientBusy is the fraction of one CPU that wrk and the backend used
// during the round (1.0: the client CPU was saturated, so the rate is the
// rig's ceiling, not the server's); NaN without a wall time.
func (r Round) ClientBusy() float64 {
	if r.Wall <= 0 {
		return math.NaN()
	}
	return float64(r.WrkCPU+r.BackendCPU) / float64(r.Wall)
}

// CPUPerRequest is the server CPU time per completed request.
func (r Round) CPUPerRequest() time.Duration { return r.perRequest(r.CPU) }

// Load is one load scenario (origins, or proxies in front of one backend).
type Load struct {
	// Kind is "origin" or "proxy".
	Kind string
	// Peer is the server that ratios are taken against.
	Peer string
	// Setup describes how the scenario ran (wrk flags, pinning, backend).
	Setup string
	// Backend names the proxies' backend ("" for origins).
	Backend string
	Rows    []LoadRow
	// Pairs are per-round ratios between two rows that the report gives
	// beside the peer ratios (PairSummaries).
	Pairs []Pair
}

// LoadRow is one server's rounds.
type LoadRow struct {
	Server string
	Rounds []Round
	// Note explains why a server has no rounds (it could not start).
	Note string
	// Bench is the row's name in benchmark lines ("" for Server). In
	// key=value form (proxy=simdedge/policy=p2c) it lets benchstat put
	// rows side by side: benchstat -col /policy.
	Bench string
}

// Summary holds a row's medians. Latencies and CPU are in microseconds.
type Summary struct {
	RPS     stats.Summary
	Latency map[float64]stats.Summary
	CPUus   stats.Summary
	// WrkCPUus and BackendCPUus are wrk's and the backend's CPU per
	// request (µs), ClientBusy the fraction of the client CPU they used,
	// Others the other processes' CPU during the round (CPUs busy).
	WrkCPUus, BackendCPUus, ClientBusy, Others stats.Summary
	// LatencyRounds counts, per percentile, the rounds that gave it (wrk
	// printed 0 in the others and no histogram replaced it).
	LatencyRounds map[float64]int
	Errors        int64
	Non2xx        int64
	// RPSCI and CPUCI are the half-widths of the 95 % confidence
	// intervals of the medians, relative to them (NaN under 6 rounds).
	RPSCI, CPUCI float64
	// The ratios are of medians; their Lo and Hi are the min–max of the
	// per-round ratios (servers run one after another within a round), or
	// the worst and best pairing of the ranges when rounds cannot be paired.
	RPSRatio   float64
	CPURatio   float64
	RPSRatioLo float64
	RPSRatioHi float64
	CPURatioLo float64
	CPURatioHi float64
	// rps and cpu keep the per-round samples for pairing.
	rps, cpu []float64
}

// Summarize returns the row's medians; ratios are filled by
// Load.Summaries.
func (r LoadRow) Summarize() Summary {
	var rps, cpu, wrkCPU, backCPU, busy, others []float64
	lat := map[float64][]float64{}
	s := Summary{Latency: map[float64]stats.Summary{}, LatencyRounds: map[float64]int{}}
	us := func(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
	for _, rd := range r.Rounds {
		rps = append(rps, rd.Wrk.RPS)
		cpu = append(cpu, us(rd.CPUPerRequest()))
		if rd.WrkCPU > 0 {
			wrkCPU = append(wrkCPU, us(rd.perRequest(rd.WrkCPU)))
		}
		if rd.BackendCPU > 0 {
			backCPU = append(backCPU, us(rd.perRequest(rd.BackendCPU)))
		}
		busy = append(busy, rd.ClientBusy())
		if rd.Wall > 0 {
			others = append(others, float64(rd.Others)/float64(rd.Wall))
		}
		for p, d := range rd.Wrk.Latency {
			lat[p] = append(lat[p], float64(d)/float64(time.Microsecond))
		}
		s.Errors += rd.Wrk.SocketErrors
		s.Non2xx += rd.Wrk.Non2xx
	}
	s.RPS, s.CPUus = stats.Summarize(rps), stats.Summarize(cpu)
	s.WrkCPUus, s.BackendCPUus = stats.Summarize(wrkCPU), stats.Summarize(backCPU)
	s.ClientBusy, s.Others = stats.Summarize(busy), stats.Summarize(others)
	s.RPSCI, s.CPUCI = stats.CISpread(rps), stats.CISpread(cpu)
	s.rps, s.cpu = rps, cpu
	for _, p := range Percentiles {
		s.Latency[p] = stats.Summarize(lat[p])
		s.LatencyRounds[p] = len(lat[p])
	}
	return s
}

// Summaries summarises every row and fills the ratios against the peer
// (requests/s: ours/peer; CPU per request: peer/ours).
func (l Load) Summaries() []Summary {
	out := make([]Summary, len(l.Rows))
	var peer *Summary
	for i, r := range l.Rows {
		out[i] = r.Summarize()
		if r.Server == l.Peer && len(r.Rounds) > 0 {
			peer = &out[i]
		}
	}
	for i := range out {
		s := &out[i]
		nan := math.NaN()
		s.RPSRatio, s.CPURatio, s.RPSRatioLo, s.RPSRatioHi, s.CPURatioLo, s.CPURatioHi = nan, nan, nan, nan, nan, nan
		if peer != nil && s.RPS.N > 0 {
			s.RPSRatio = stats.Ratio(s.RPS.Median, peer.RPS.Median)
			s.RPSRatioLo = stats.Ratio(s.RPS.Min, peer.RPS.Max)
			s.RPSRatioHi = stats.Ratio(s.RPS.Max, peer.RPS.Min)
			s.CPURatio = stats.Ratio(peer.CPUus.Median, s.CPUus.Median)
			s.CPURatioLo = stats.Ratio(peer.CPUus.Min, s.CPUus.Max)
			s.CPURatioHi = stats.Ratio(peer.CPUus.Max, s.CPUus.Min)
			if pr := stats.Summarize(stats.Paired(s.rps, peer.rps)); pr.N > 0 {
				s.RPSRatioLo, s.RPSRatioHi = pr.Min, pr.Max
			}
			if pr := stats.Summarize(stats.Paired(peer.cpu, s.cpu)); pr.N > 0 {
				s.CPURatioLo, s.CPURatioHi = pr.Min, pr.Max
			}
		}
	}
	return out
}

// WriteBenchstat writes every round as a benchmark line,
//
//	BenchmarkLoad/<kind>/<server or LoadRow.Bench> <requests> <ns> ns/req <rps> req/s <p50> p50-sec ... <cpu> cpu-sec/req <w> wrk-cpu-sec/req [<b> backend-cpu-sec/req]
//
// A percentile that the round did not give (see wrkout.Result.ZeroPercentiles)
// is left out of that line rather than written as 0.
// so that `benchstat old.txt new.txt` compares two runs' load results the
// way it compares micro benchmarks. Latencies are in seconds, the unit
// benchstat scales for display.
func (l Load) WriteBenchstat(w io.Writer) error {
	for _, r := range l.Rows {
		name := r.Server
		if r.Bench != "" {
			name = r.Bench
		}
		for _, rd := range r.Rounds {
			var b strings.Builder
			fmt.Fprintf(&b, "BenchmarkLoad/%s/%s\t%d\t%.0f ns/req\t%.2f req/s", l.Kind, name, rd.Wrk.Requests,
				1e9/math.Max(rd.Wrk.RPS, 1e-9), rd.Wrk.RPS)
			for _, p := range Percentiles {
				if d, ok := rd.Wrk.Latency[p]; ok {
					fmt.Fprintf(&b, "\t%.9f p%.0f-sec", d.Seconds(), p)
				}
			}
			fmt.Fprintf(&b, "\t%.9f cpu-sec/req", rd.CPUPerRequest().Seconds())
			if rd.WrkCPU > 0 {
				fmt.Fprintf(&b, "\t%.9f wrk-cpu-sec/req", rd.perRequest(rd.WrkCPU).Seconds())
			}
			if rd.BackendCPU > 0 {
				fmt.Fprintf(&b, "\t%.9f backend-cpu-sec/req", rd.perRequest(rd.BackendCPU).Seconds())
			}
			b.WriteString("\n")
			if _, err := io.WriteString(w, b.String()); err != nil {
				return err
			}
		}
	}
	return nil
}
