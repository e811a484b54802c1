package main

import (
	"strings"
	"testing"

	"github.com/simdedge/simdedge/bench/internal/gobench"
)

// TestRDMASummaryBusy: the busy-poll row is reported with its own ratio
// to fi_pingpong.
func TestRDMASummaryBusy(t *testing.T) {
	var rs []gobench.Result
	for _, l := range []string{
		"BenchmarkTransportVsTCP/pingpong/rdma-2 1000 90000 ns/op 80000 cpu-ns/op",
		"BenchmarkTransportVsTCP/pingpong/rdma_busy-2 1000 40000 ns/op 60000 cpu-ns/op",
		"BenchmarkTransportVsTCP/pingpong/kernel_tcp-2 1000 30000 ns/op 20000 cpu-ns/op",
		"BenchmarkFiPingpong/tcp/64B-2 1000 20000 ns/op 40000 cpu-ns/op",
	} {
		r, err := gobench.ParseLine(l)
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
	}
	n := rdmaSummary(rs)
	if len(n) != 1 || !strings.Contains(n[0], "busy poll mode at both ends 60.0 µs") ||
		!strings.Contains(n[0], "2.00x fi_pingpong's blocking, 1.50x busy-polling") {
		t.Errorf("rdmaSummary = %q", n)
	}
}
