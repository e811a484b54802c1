package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/simdedge/simdedge/bench/internal/gobench"
	"github.com/simdedge/simdedge/bench/internal/stats"
)

// The rdma area: package rdma's BenchmarkTransportVsTCP, built with
// -tags rdma (cgo over libfabric), one request at a time, cpu-ns/op
// covering both ends:
//
//	TransportVsTCP/pingpong/rdma             HTTP/1.1 requests, client and server in one
//	                                         process, both blocking in Go's netpoller
//	TransportVsTCP/pingpong/rdma_envelope    the same request as a FlatBuffers envelope
//	TransportVsTCP/pingpong/rdma_busy        one process, both ends busy-polling (rdma.PollBusy)
//	TransportVsTCP/pingpong/rdma_procs_busy  the backend in a second process, both busy-polling:
//	                                         fi_pingpong's setting; cpu-ns/op both processes
//	TransportVsTCP/pingpong/kernel_tcp       the server core on kernel TCP keep-alive (the peer)
//
// After every round, rdma/fipingpong.sh runs libfabric's fi_pingpong over
// the same provider (two processes, both busy-polling, messages of the
// transport's request size, both processes' CPU per round trip), so that
// the target (the transport's CPU per request at most 1.5x
// fi_pingpong's) is checked against a figure of the same round. The
// like-for-like row is rdma_procs_busy: two processes, busy polling, both
// processes' CPU. The one-process rows answer a different question (what
// a client and server sharing two cores cost) and react to the machine's
// load differently from fi_pingpong's spinning processes, so their ratio
// moves with the load. The provider is libfabric's tcp on loopback:
// software, not RDMA hardware; the figures measure overhead.
var rdmaArea = microArea{
	name: "rdma", module: "root", pkg: "./rdma/", bench: "^BenchmarkTransportVsTCP$", tags: "rdma",
	missing:    rdmaMissing,
	afterRound: fiPingpongRound,
	summarize:  rdmaSummary,
}

// libfabricHeader is what cgo needs to build package rdma (a variable for
// the tests).
var libfabricHeader = "/usr/include/rdma/fabric.h"

// rdmaMissing says why package rdma cannot be built here, "" when it can.
func rdmaMissing() string {
	if !fileExists(libfabricHeader) {
		return "libfabric-dev is not installed (no " + libfabricHeader + "; apt-get install libfabric-dev)"
	}
	if lookTool("gcc") == "" && lookTool("cc") == "" {
		return "no C compiler for cgo (apt-get install gcc)"
	}
	return ""
}

// errNoFiPingpong: the reference is absent; the area still runs.
var errNoFiPingpong = errors.New("fi_pingpong is not installed (apt-get install libfabric-bin): no libfabric reference in this run")

// fiPingpongSize is fi_pingpong's message size: the transport's request
// message in the benchmark (its 24-byte header and the 72-byte request;
// the response message is about as long).
const fiPingpongSize = "96"

// fiPingpongIterations is fi_pingpong's iteration count for a bench time:
// 40,000 per second, about as long as one benchmark run (a round trip is
// 15-40 µs here on a quiet machine). fipingpong.sh subtracts a 10-round
// run's CPU (start-up, about 0.3 s, which varies by ±0.03 s): with 10,000
// round trips that was ±3 µs, 10 %, of each round's figure.
func fiPingpongIterations(benchtime string) int {
	const perSecond = 40000
	d, err := time.ParseDuration(benchtime)
	if err != nil {
		return perSecond
	}
	return max(1000, int(d.Seconds()*perSecond))
}

// fiPingpongRound runs one round of rdma/fipingpong.sh and returns its
// benchmark lines.
func fiPingpongRound(ctx context.Context, e *env, o microOpts) ([]string, error) {
	if lookTool("fi_pingpong") == "" {
		return nil, errNoFiPingpong
	}
	script := filepath.Join(e.repo, "rdma", "fipingpong.sh")
	n := strconv.Itoa(fiPingpongIterations(o.benchtime))
	out, err := runCmd(ctx, e.repo, "bash", script, "-n", n, "-c", "1", fiPingpongSize)
	if err != nil {
		return nil, fmt.Errorf("fi_pingpong failed: %s", lastLine(out))
	}
	var lines []string
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "Benchmark") {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		return nil, fmt.Errorf("fi_pingpong printed no result: %s", lastLine(out))
	}
	return lines, nil
}

// rdmaSummary states the transport's CPU per request against kernel TCP
// and fi_pingpong: medians over the rounds, and for fi_pingpong the median
// of the per-round ratios (the k-th sample of a row against the k-th
// fi_pingpong sample, which ran right after it), since fi_pingpong's CPU
// moves with the load from round to round.
func rdmaSummary(results []gobench.Result) []string {
	samples := map[string][]float64{}
	var fi []float64
	for _, r := range results {
		v, ok := r.Metrics["cpu-ns/op"]
		if !ok {
			continue
		}
		if strings.HasPrefix(r.Name, "BenchmarkFiPingpong/") {
			fi = append(fi, v)
			continue
		}
		samples[r.Name] = append(samples[r.Name], v)
	}
	med := func(name string) float64 {
		if s := samples["BenchmarkTransportVsTCP/pingpong/"+name]; len(s) > 0 {
			return stats.Summarize(s).Median
		}
		return 0
	}
	rdma, tcp := med("rdma"), med("kernel_tcp")
	if rdma == 0 {
		return nil
	}
	us := func(ns float64) string { return strconv.FormatFloat(ns/1e3, 'f', 1, 64) + " µs" }
	ratio := func(a, b float64) string {
		if b == 0 || math.IsNaN(a/b) {
			return "n/a"
		}
		return strconv.FormatFloat(a/b, 'f', 2, 64) + "x"
	}
	// perRound is the median and range of row's per-round ratios to
	// fi_pingpong.
	perRound := func(name string) string {
		s := samples["BenchmarkTransportVsTCP/pingpong/"+name]
		var r []float64
		for k := 0; k < len(s) && k < len(fi); k++ {
			if fi[k] > 0 {
				r = append(r, s[k]/fi[k])
			}
		}
		if len(r) == 0 {
			return "n/a"
		}
		sum := stats.Summarize(r)
		lo, hi := slices.Min(r), slices.Max(r)
		return fmt.Sprintf("%.2fx (rounds %.2f-%.2fx)", sum.Median, lo, hi)
	}
	n := fmt.Sprintf("rdma: the message transport takes %s of CPU per request (client and server in one process, blocking; medians of cpu-ns/op), %s kernel TCP keep-alive's %s",
		us(rdma), ratio(rdma, tcp), us(tcp))
	if env := med("rdma_envelope"); env > 0 {
		n += fmt.Sprintf("; envelope requests %s (%s HTTP/1.1's)", us(env), ratio(env, rdma))
	}
	busy, procs := med("rdma_busy"), med("rdma_procs_busy")
	if busy > 0 {
		n += fmt.Sprintf("; one process busy-polling %s", us(busy))
	}
	if procs > 0 {
		n += fmt.Sprintf("; two processes busy-polling %s (both processes)", us(procs))
	}
	if len(fi) > 0 {
		n += fmt.Sprintf(". fi_pingpong (same provider, %s-byte messages, two processes busy-polling, both processes' CPU) %s per round trip; per-round ratios to it, median:",
			fiPingpongSize, us(stats.Summarize(fi).Median))
		if procs > 0 {
			n += " like for like (two processes, busy) " + perRound("rdma_procs_busy") + ";"
		}
		n += " one process blocking " + perRound("rdma")
		if busy > 0 {
			n += ", one process busy " + perRound("rdma_busy")
		}
		n += " (target <= 1.5x; fi_pingpong's CPU follows its wall time and varies with the load)"
	}
	return []string{n + ". libfabric's tcp provider on loopback is software, not RDMA hardware: these figures measure overhead"}
}
