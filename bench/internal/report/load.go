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
}

// CPUPerRequest is the server CPU time per completed request.
func (r Round) CPUPerRequest() time.Duration {
	if r.Wrk.Requests == 0 {
		return 0
	}
	return r.CPU / time.Duration(r.Wrk.Requests)
}

// Load is one load scenario (origins, or proxies in front of one backend).
type Load struct {
	// Kind is "origin" or "proxy".
	Kind string
	// Peer is the server that ratios are taken against.
	Peer string
	// Setup describes how the scenario ran (wrk flags, pinning, backend).
	Setup string
	Rows  []LoadRow
}

// LoadRow is one server's rounds.
type LoadRow struct {
	Server string
	Rounds []Round
	// Note explains why a server has no rounds (it could not start).
	Note string
}

// Summary holds a row's medians. Latencies and CPU are in microseconds.
type Summary struct {
	RPS     stats.Summary
	Latency map[float64]stats.Summary
	CPUus   stats.Summary
	Errors  int64
	Non2xx  int64
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
	var rps, cpu []float64
	lat := map[float64][]float64{}
	s := Summary{Latency: map[float64]stats.Summary{}}
	for _, rd := range r.Rounds {
		rps = append(rps, rd.Wrk.RPS)
		cpu = append(cpu, float64(rd.CPUPerRequest())/float64(time.Microsecond))
		for p, d := range rd.Wrk.Latency {
			lat[p] = append(lat[p], float64(d)/float64(time.Microsecond))
		}
		s.Errors += rd.Wrk.SocketErrors
		s.Non2xx += rd.Wrk.Non2xx
	}
	s.RPS, s.CPUus = stats.Summarize(rps), stats.Summarize(cpu)
	s.RPSCI, s.CPUCI = stats.CISpread(rps), stats.CISpread(cpu)
	s.rps, s.cpu = rps, cpu
	for _, p := range Percentiles {
		s.Latency[p] = stats.Summarize(lat[p])
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
//	BenchmarkLoad/<kind>/<server> <requests> <ns> ns/req <rps> req/s <p50> p50-sec ... <cpu> cpu-sec/req
//
// so that `benchstat old.txt new.txt` compares two runs' load results the
// way it compares micro benchmarks. Latencies are in seconds, the unit
// benchstat scales for display.
func (l Load) WriteBenchstat(w io.Writer) error {
	for _, r := range l.Rows {
		for _, rd := range r.Rounds {
			var b strings.Builder
			fmt.Fprintf(&b, "BenchmarkLoad/%s/%s\t%d\t%.0f ns/req\t%.2f req/s", l.Kind, r.Server, rd.Wrk.Requests,
				1e9/math.Max(rd.Wrk.RPS, 1e-9), rd.Wrk.RPS)
			for _, p := range Percentiles {
				if d, ok := rd.Wrk.Latency[p]; ok {
					fmt.Fprintf(&b, "\t%.9f p%.0f-sec", d.Seconds(), p)
				}
			}
			fmt.Fprintf(&b, "\t%.9f cpu-sec/req\n", rd.CPUPerRequest().Seconds())
			if _, err := io.WriteString(w, b.String()); err != nil {
				return err
			}
		}
	}
	return nil
}
