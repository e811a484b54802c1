package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/simdedge/simdedge/bench/internal/gobench"
	"github.com/simdedge/simdedge/bench/internal/stats"
)

// The rdma area: package rdma's BenchmarkTransportVsTCP, built with
// -tags rdma (cgo over libfabric), one request at a time with client and
// server in one process, cpu-ns/op covering both ends:
//
//	TransportVsTCP/pingpong/rdma           HTTP/1.1 requests over the message transport
//	TransportVsTCP/pingpong/rdma_envelope  the same request as a FlatBuffers envelope
//	TransportVsTCP/pingpong/rdma_busy      HTTP/1.1, both ends in the busy poll mode
//	                                       (rdma.PollBusy, polling as fi_pingpong does)
//	TransportVsTCP/pingpong/kernel_tcp     the server core on kernel TCP keep-alive (the peer)
//
// After every round, rdma/fipingpong.sh runs libfabric's fi_pingpong over
// the same provider (64-byte messages, both processes' CPU per round
// trip), so that the target (the transport's CPU per request at
// most 1.5x fi_pingpong's) is checked against a figure of the same run.
// The provider is libfabric's tcp on loopback: software, not RDMA
// hardware; the figures measure overhead.
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

// fiPingpongIterations is fi_pingpong's iteration count for a bench time:
// about as long as one benchmark run (a round trip is 20-300 µs here).
func fiPingpongIterations(benchtime string) int {
	const perSecond = 10000
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
	out, err := runCmd(ctx, e.repo, "bash", script, "-n", n, "-c", "1", "64")
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
// and fi_pingpong, from the medians of the run.
func rdmaSummary(results []gobench.Result) []string {
	med := map[string]float64{}
	samples := map[string][]float64{}
	for _, r := range results {
		if v, ok := r.Metrics["cpu-ns/op"]; ok {
			samples[r.Name] = append(samples[r.Name], v)
		}
	}
	for name, s := range samples {
		med[name] = stats.Summarize(s).Median
	}
	rdma, tcp := med["BenchmarkTransportVsTCP/pingpong/rdma"], med["BenchmarkTransportVsTCP/pingpong/kernel_tcp"]
	fi := med["BenchmarkFiPingpong/tcp/64B"]
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
	n := fmt.Sprintf("rdma: the message transport takes %s of CPU per request (both ends, medians of cpu-ns/op), %s kernel TCP keep-alive's %s",
		us(rdma), ratio(rdma, tcp), us(tcp))
	if env := med["BenchmarkTransportVsTCP/pingpong/rdma_envelope"]; env > 0 {
		n += fmt.Sprintf("; envelope requests %s (%s HTTP/1.1's)", us(env), ratio(env, rdma))
	}
	busy := med["BenchmarkTransportVsTCP/pingpong/rdma_busy"]
	if busy > 0 {
		n += fmt.Sprintf("; in the busy poll mode at both ends %s", us(busy))
	}
	if fi > 0 {
		n += fmt.Sprintf("; fi_pingpong (64 B, same provider, both processes, busy-polling) %s per round trip, so the transport is %s fi_pingpong's blocking",
			us(fi), ratio(rdma, fi))
		if busy > 0 {
			n += fmt.Sprintf(", %s busy-polling", ratio(busy, fi))
		}
		n += " (target <= 1.5x; fi_pingpong's CPU follows its wall time and varies with the load)"
	}
	return []string{n + ". libfabric's tcp provider on loopback is software, not RDMA hardware: these figures measure overhead"}
}
