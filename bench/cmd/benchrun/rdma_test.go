package main

import (
	"strings"
	"testing"

	"github.com/simdedge/simdedge/bench/internal/gobench"
)

// TestRDMASummaryBusy: each rdma row gets the median of its per-round
// ratios to the fi_pingpong of the same round, the two-process busy row
// first (like for like).
func TestRDMASummaryBusy(t *testing.T) {
	rs := parseLines(t,
		"BenchmarkTransportVsTCP/pingpong/rdma-2 1000 90000 ns/op 80000 cpu-ns/op",
		"BenchmarkTransportVsTCP/pingpong/rdma_busy-2 1000 40000 ns/op 60000 cpu-ns/op",
		"BenchmarkTransportVsTCP/pingpong/rdma_procs_busy-2 1000 40000 ns/op 50000 cpu-ns/op",
		"BenchmarkTransportVsTCP/pingpong/kernel_tcp-2 1000 30000 ns/op 20000 cpu-ns/op",
		"BenchmarkFiPingpong/tcp/96-2 1000 20000 ns/op 40000 cpu-ns/op",
		"BenchmarkTransportVsTCP/pingpong/rdma-2 1000 90000 ns/op 80000 cpu-ns/op",
		"BenchmarkTransportVsTCP/pingpong/rdma_busy-2 1000 40000 ns/op 60000 cpu-ns/op",
		"BenchmarkTransportVsTCP/pingpong/rdma_procs_busy-2 1000 40000 ns/op 50000 cpu-ns/op",
		"BenchmarkTransportVsTCP/pingpong/kernel_tcp-2 1000 30000 ns/op 20000 cpu-ns/op",
		"BenchmarkFiPingpong/tcp/96-2 1000 20000 ns/op 20000 cpu-ns/op",
	)
	n := rdmaSummary(rs)
	// Ratios: rdma 2 and 4, busy 1.5 and 3, procs 1.25 and 2.5.
	for _, want := range []string{"one process busy-polling 60.0 µs", "two processes busy-polling 50.0 µs",
		"like for like (two processes, busy) 1.88x (rounds 1.25-2.50x)", "one process blocking 3.00x (rounds 2.00-4.00x)",
		"one process busy 2.25x (rounds 1.50-3.00x)"} {
		if len(n) != 1 || !strings.Contains(n[0], want) {
			t.Errorf("rdmaSummary = %q, want %q in it", n, want)
		}
	}
}

func TestRDMASummary(t *testing.T) {
	rs := parseLines(t,
		"BenchmarkTransportVsTCP/pingpong/rdma-2 1000 90000 ns/op 80000 cpu-ns/op",
		"BenchmarkTransportVsTCP/pingpong/rdma-2 1000 90000 ns/op 100000 cpu-ns/op",
		"BenchmarkTransportVsTCP/pingpong/kernel_tcp-2 1000 30000 ns/op 20000 cpu-ns/op",
		"BenchmarkFiPingpong/tcp/64B-2 1000 40000 ns/op 45000 cpu-ns/op",
	)
	// One fi_pingpong round: only the first rdma sample has a ratio.
	n := rdmaSummary(rs)
	if len(n) != 1 || !strings.Contains(n[0], "90.0 µs") || !strings.Contains(n[0], "4.50x kernel TCP") ||
		!strings.Contains(n[0], "one process blocking 1.78x (rounds 1.78-1.78x)") || !strings.Contains(n[0], "not RDMA hardware") {
		t.Errorf("rdmaSummary = %q", n)
	}
	if n := rdmaSummary(nil); n != nil {
		t.Errorf("rdmaSummary without results = %q", n)
	}
	if a, b := fiPingpongIterations("100ms"), fiPingpongIterations("1s"); a != 4000 || b != 40000 {
		t.Errorf("fiPingpongIterations: 100ms %d, 1s %d", a, b)
	}
}

// parseLines parses go test benchmark lines, failing the test on a bad one.
func parseLines(t *testing.T, lines ...string) []gobench.Result {
	t.Helper()
	var rs []gobench.Result
	for _, l := range lines {
		r, err := gobench.ParseLine(l)
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
	}
	return rs
}
