package main

import (
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/simdedge/simdedge/bench/internal/gobench"
)

func TestParseAreas(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"all", []string{"url", "http", "json", "asm", "xdp", "rdma", "origin", "pipelined", "proxy"}},
		{"micro", []string{"url", "http", "json", "asm", "xdp", "rdma"}},
		{"rdma", []string{"rdma"}},
		{"load,url", []string{"origin", "pipelined", "proxy", "url"}},
		{"asm, asm", []string{"asm"}},
	}
	for _, tt := range tests {
		got, err := parseAreas(tt.in)
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("parseAreas(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
	if _, err := parseAreas("url,nope"); err == nil {
		t.Error("unknown area accepted")
	}
}

func TestResultBase(t *testing.T) {
	at := time.Date(2026, 11, 22, 23, 30, 0, 0, time.FixedZone("X", -3600))
	if got := resultBase(at, "vm 1/a", false); got != "2026-11-23-vm_1_a" {
		t.Errorf("resultBase = %q", got)
	}
	if got := resultBase(at, "", true); got != "2026-11-23-unknown-quick" {
		t.Errorf("resultBase quick = %q", got)
	}
}

func TestEstimateRun(t *testing.T) {
	if a, b := estimateRun("100ms"), estimateRun("1s"); !(a > 0.1 && b > 1 && b > a) {
		t.Errorf("estimateRun: 100ms %v, 1s %v", a, b)
	}
	if estimateRun("100x") <= 0 {
		t.Error("iteration bench time has no estimate")
	}
}

func TestSkipNotes(t *testing.T) {
	out := "--- SKIP: BenchmarkJSON/canada\n    corpus_test.go:25: corpus json/canada.json not available: no such file\nPASS\n"
	n := skipNotes(out)
	if len(n) != 1 || !strings.Contains(n[0], "BenchmarkJSON/canada skipped: corpus_test.go:25: corpus json/canada.json not available") {
		t.Errorf("skipNotes = %q", n)
	}
}

func TestNginxConf(t *testing.T) {
	for _, upstream := range []string{"", "127.0.0.1:9"} {
		var b strings.Builder
		err := nginxConf.Execute(&b, map[string]any{"Dir": "/tmp/x", "Port": 1234, "Upstream": upstream, "Body": `hello\n`})
		if err != nil {
			t.Fatal(err)
		}
		s := b.String()
		for _, want := range []string{"daemon off;", "pid /tmp/x/nginx.pid;", "listen 127.0.0.1:1234;", "access_log off;"} {
			if !strings.Contains(s, want) {
				t.Errorf("upstream %q: config lacks %q", upstream, want)
			}
		}
		if proxy := strings.Contains(s, "proxy_pass http://backend;") && strings.Contains(s, "server 127.0.0.1:9;"); proxy != (upstream != "") {
			t.Errorf("upstream %q: proxy section present = %v\n%s", upstream, proxy, s)
		}
		if strings.Count(s, "{") != strings.Count(s, "}") {
			t.Errorf("unbalanced braces:\n%s", s)
		}
	}
}

func TestSimdedgeConf(t *testing.T) {
	var b strings.Builder
	if err := simdedgeConf.Execute(&b, map[string]any{"Port": 1, "Upstream": "127.0.0.1:2", "Body": "x"}); err != nil {
		t.Fatal(err)
	}
	s := b.String()
	for _, want := range []string{`listen: "127.0.0.1:1"`, `targets: ["127.0.0.1:2"]`, "proxy: {upstream: backend}"} {
		if !strings.Contains(s, want) {
			t.Errorf("config lacks %q:\n%s", want, s)
		}
	}
}

func TestTailBuffer(t *testing.T) {
	var tb tailBuffer
	tb.Write([]byte(strings.Repeat("x", tailMax)))
	tb.Write([]byte("\nfirst\nlast line\n"))
	if tb.Last() != "last line" || len(tb.buf) != tailMax {
		t.Errorf("Last = %q, len %d", tb.Last(), len(tb.buf))
	}
}

func TestRDMASummary(t *testing.T) {
	var rs []gobench.Result
	for _, l := range []string{
		"BenchmarkTransportVsTCP/pingpong/rdma-2 1000 90000 ns/op 80000 cpu-ns/op",
		"BenchmarkTransportVsTCP/pingpong/rdma-2 1000 90000 ns/op 100000 cpu-ns/op",
		"BenchmarkTransportVsTCP/pingpong/kernel_tcp-2 1000 30000 ns/op 20000 cpu-ns/op",
		"BenchmarkFiPingpong/tcp/64B-2 1000 40000 ns/op 45000 cpu-ns/op",
	} {
		r, err := gobench.ParseLine(l)
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
	}
	n := rdmaSummary(rs)
	if len(n) != 1 || !strings.Contains(n[0], "90.0 µs") || !strings.Contains(n[0], "4.50x kernel TCP") ||
		!strings.Contains(n[0], "2.00x fi_pingpong") || !strings.Contains(n[0], "not RDMA hardware") {
		t.Errorf("rdmaSummary = %q", n)
	}
	if n := rdmaSummary(nil); n != nil {
		t.Errorf("rdmaSummary without results = %q", n)
	}
	if a, b := fiPingpongIterations("100ms"), fiPingpongIterations("1s"); a != 1000 || b != 10000 {
		t.Errorf("fiPingpongIterations: 100ms %d, 1s %d", a, b)
	}
}

// Without libfabric the rdma area is skipped with a note that says what to
// install; without fi_pingpong it runs without the reference.
func TestRDMADegrades(t *testing.T) {
	old := libfabricHeader
	t.Cleanup(func() { libfabricHeader = old })
	libfabricHeader = "/nonexistent/rdma/fabric.h"
	if why := rdmaMissing(); !strings.Contains(why, "apt-get install libfabric-dev") {
		t.Errorf("rdmaMissing without the header = %q", why)
	}
	t.Setenv("PATH", t.TempDir())
	if fileExists("/usr/sbin/fi_pingpong") {
		t.Skip("fi_pingpong in /usr/sbin: cannot hide it")
	}
	lines, err := fiPingpongRound(t.Context(), &env{repo: t.TempDir()}, microOpts{benchtime: "100ms"})
	if lines != nil || !errors.Is(err, errNoFiPingpong) {
		t.Errorf("fiPingpongRound without fi_pingpong = %q, %v", lines, err)
	}
}

func TestPipelineScript(t *testing.T) {
	dir := t.TempDir()
	path, err := pipelineScript(dir, 16)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"for i = 1, 16 do", "wrk.format()", "request = function() return batch end"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("script lacks %q:\n%s", want, b)
		}
	}
	again, err := pipelineScript(dir, 16)
	if err != nil || again != path {
		t.Errorf("second call = %q, %v; want the same file", again, err)
	}
}
