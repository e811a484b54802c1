package report

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/simdedge/simdedge/bench/internal/gobench"
	"github.com/simdedge/simdedge/bench/internal/stats"
	"github.com/simdedge/simdedge/bench/internal/sysinfo"
	"github.com/simdedge/simdedge/bench/internal/wrkout"
)

var testSpecs = map[string]AreaSpec{
	"HTTPRequest":   {Section: "http", Peer: PeerRef{Impl: "net_http"}, Ours: []string{"simdedge", "simdedge_purego"}},
	"URLParse":      {Section: "url", Peer: PeerRef{Impl: "net_url"}, Ours: []string{"simdedge"}},
	"URLParseAlloc": {Section: "url", Peer: PeerRef{Area: "URLParse", Impl: "net_url"}, Ours: []string{""}},
}

func loadResults(t *testing.T) []gobench.Result {
	t.Helper()
	f, err := os.Open("../gobench/testdata/micro.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	res, _, err := gobench.Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// nsSamples collects ns/op of one benchmark name from the raw results, for
// an independent computation of the expected ratio.
func nsSamples(res []gobench.Result, name string) []float64 {
	var v []float64
	for _, r := range res {
		if r.Name == name {
			v = append(v, r.Metrics["ns/op"])
		}
	}
	return v
}

func TestGroupMicro(t *testing.T) {
	res := loadResults(t)
	groups := GroupMicro(res, testSpecs)
	if len(groups) != 3 || groups[0].Area != "HTTPRequest" || groups[1].Area != "URLParse" || groups[2].Area != "URLParseAlloc" {
		t.Fatalf("areas = %+v", groups)
	}
	h := groups[0]
	if len(h.Rows) != 4 {
		t.Fatalf("HTTPRequest rows = %d, want 4 (small_get x 4 impls)", len(h.Rows))
	}
	ours := stats.Summarize(nsSamples(res, "BenchmarkHTTPRequest/small_get/simdedge"))
	peer := stats.Summarize(nsSamples(res, "BenchmarkHTTPRequest/small_get/net_http"))
	r := h.Rows[0]
	if r.Impl != "simdedge" || r.Case != "small_get" || r.NsOp.N != 2 {
		t.Fatalf("row 0 = %+v", r)
	}
	if want := peer.Median / ours.Median; math.Abs(r.Speedup-want) > 1e-9 {
		t.Errorf("speed-up = %v, want %v", r.Speedup, want)
	}
	// The range is that of the per-round ratios (both sides ran in each
	// round), not the pairing of the two ranges' extremes.
	paired := stats.Summarize(stats.Paired(nsSamples(res, "BenchmarkHTTPRequest/small_get/net_http"),
		nsSamples(res, "BenchmarkHTTPRequest/small_get/simdedge")))
	if math.Abs(r.SpeedupLo-paired.Min) > 1e-9 || math.Abs(r.SpeedupHi-paired.Max) > 1e-9 || r.SpeedupLo < peer.Min/ours.Max {
		t.Errorf("speed-up range = %v..%v around %v, want the per-round %v..%v", r.SpeedupLo, r.SpeedupHi, r.Speedup, paired.Min, paired.Max)
	}
	if h.Rows[2].Impl != "net_http" || h.Rows[2].Speedup != 1 {
		t.Errorf("peer's own ratio = %v", h.Rows[2].Speedup)
	}
	u := groups[1].Rows[0]
	if u.Extra["ns/URL"] == 0 || u.AllocsOp != 1 {
		t.Errorf("URL row extra = %v allocs %v", u.Extra, u.AllocsOp)
	}
	// Cross-area peer: URLParseAlloc/kasztp against URLParse/kasztp/net_url.
	a := groups[2].Rows[0]
	want := stats.Summarize(nsSamples(res, "BenchmarkURLParse/kasztp/net_url")).Median /
		stats.Summarize(nsSamples(res, "BenchmarkURLParseAlloc/kasztp")).Median
	if a.Case != "kasztp" || math.Abs(a.Speedup-want) > 1e-9 {
		t.Errorf("cross-area speed-up = %v, want %v", a.Speedup, want)
	}
}

func TestGroupMicroWithoutPeer(t *testing.T) {
	groups := GroupMicro(loadResults(t), nil)
	for _, g := range groups {
		for _, r := range g.Rows {
			if !math.IsNaN(r.Speedup) {
				t.Errorf("%s/%s/%s: ratio %v without a peer", g.Area, r.Case, r.Impl, r.Speedup)
			}
		}
	}
}

func wrkResult(t *testing.T) wrkout.Result {
	t.Helper()
	out, err := os.ReadFile("../wrkout/testdata/fasthttp.txt")
	if err != nil {
		t.Fatal(err)
	}
	w, err := wrkout.Parse(string(out))
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func testLoad(t *testing.T) Load {
	w := wrkResult(t)
	slow := w
	slow.RPS /= 2
	slow.Requests /= 2
	return Load{Kind: "origin", Peer: "net_http", Setup: "test.", Rows: []LoadRow{
		{Server: "fasthttp", Rounds: []Round{{Wrk: w, CPU: time.Second}, {Wrk: w, CPU: time.Second}}},
		{Server: "net_http", Rounds: []Round{{Wrk: slow, CPU: time.Second}}},
		{Server: "simdedge", Note: "simdedge serve: unknown command"},
	}}
}

func TestLoadSummaries(t *testing.T) {
	l := testLoad(t)
	s := l.Summaries()
	if math.Abs(s[0].RPSRatio-2) > 1e-9 {
		t.Errorf("fasthttp req/s ratio = %v, want 2", s[0].RPSRatio)
	}
	// Same CPU for half the requests: the peer costs twice as much per request.
	if math.Abs(s[0].CPURatio-2) > 0.01 {
		t.Errorf("CPU ratio = %v, want 2", s[0].CPURatio)
	}
	wantCPU := float64(time.Second/time.Duration(wrkResult(t).Requests)) / float64(time.Microsecond)
	if math.Abs(s[0].CPUus.Median-wantCPU) > 1e-6 {
		t.Errorf("CPU µs/req = %v, want %v", s[0].CPUus.Median, wantCPU)
	}
	if s[0].Latency[99].Median != 218450 {
		t.Errorf("p99 = %v µs", s[0].Latency[99].Median)
	}
	if !math.IsNaN(s[2].RPSRatio) {
		t.Errorf("server that did not run has ratio %v", s[2].RPSRatio)
	}
}

// TestLoadPairedRanges: with the same number of rounds on both sides, the
// ratio ranges are those of the per-round ratios.
func TestLoadPairedRanges(t *testing.T) {
	w := wrkResult(t)
	at := func(rps float64, cpu time.Duration) Round {
		r := w
		r.RPS = rps
		r.Requests = int64(rps * 10)
		return Round{Wrk: r, CPU: cpu}
	}
	// Round 2 is disturbed for both: the per-round ratio stays 2 (req/s)
	// and 4 (CPU) while the two sides' ranges overlap widely.
	l := Load{Kind: "origin", Peer: "net_http", Rows: []LoadRow{
		{Server: "simdedge", Rounds: []Round{at(2000, time.Second), at(1000, time.Second), at(2000, time.Second)}},
		{Server: "net_http", Rounds: []Round{at(1000, 2*time.Second), at(500, 2*time.Second), at(1000, 2*time.Second)}},
	}}
	s := l.Summaries()[0]
	if s.RPSRatioLo != 2 || s.RPSRatioHi != 2 || math.Abs(s.CPURatioLo-4) > 1e-9 || math.Abs(s.CPURatioHi-4) > 1e-9 {
		t.Errorf("paired ranges req/s %v–%v, CPU %v–%v; want 2–2 and 4–4", s.RPSRatioLo, s.RPSRatioHi, s.CPURatioLo, s.CPURatioHi)
	}
	if !math.IsNaN(s.CPUCI) {
		t.Errorf("CI from 3 rounds = %v, want NaN (too few)", s.CPUCI)
	}
}

func TestWriteBenchstat(t *testing.T) {
	var b bytes.Buffer
	if err := testLoad(t).WriteBenchstat(&b); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("lines = %d, want one per round (3)", len(lines))
	}
	r, err := gobench.ParseLine(lines[0])
	if err != nil {
		t.Fatalf("benchstat line does not parse: %v\n%s", err, lines[0])
	}
	if r.Name != "BenchmarkLoad/origin/fasthttp" || r.Metrics["req/s"] != 14234.01 || r.Metrics["p99-sec"] != 0.21845 {
		t.Errorf("parsed %+v", r)
	}
}

func TestWriteFiles(t *testing.T) {
	dir := t.TempDir()
	r := &Report{
		Info:      sysinfo.Info{Host: "testhost", CPUModel: "Test CPU", CPUs: 2, Go: "go1.26", Commit: "abc"},
		SIMD:      "avx512",
		Start:     time.Date(2026, 11, 22, 4, 0, 0, 0, time.UTC),
		End:       time.Date(2026, 11, 22, 4, 9, 0, 0, time.UTC),
		LoadStart: "1.00 2.00 3.00", LoadEnd: "4.00 5.00 6.00",
		Quick: true, Command: "benchrun -quick",
		Micro: GroupMicro(loadResults(t), testSpecs),
		Load:  []Load{testLoad(t)},
		Notes: []string{"nginx: not installed"},
	}
	md, err := r.WriteFiles(dir, "2026-11-22-testhost")
	if err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	s := string(text)
	for _, want := range []string{
		"load average 1.00 2.00 3.00 at start, 4.00 5.00 6.00 at end",
		"| HTTPRequest | small_get | simdedge |",
		"- nginx: not installed",
		"did not run: simdedge serve: unknown command",
		"![speed-up vs peer: http (peer: net_http)](2026-11-22-testhost-http.svg)",
		"| 9m0s |",
		"| load origin | CPU/req | fasthttp |",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	svgs, _ := filepath.Glob(filepath.Join(dir, "*.svg"))
	// http, url, load-origin-rps, load-origin-latency.
	if len(svgs) != 4 {
		t.Errorf("svgs = %v", svgs)
	}
	for _, p := range svgs {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		d := xml.NewDecoder(bytes.NewReader(data))
		for {
			_, err := d.Token()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", p, err)
			}
		}
		if !strings.Contains(s, "("+filepath.Base(p)+")") {
			t.Errorf("report does not embed %s", filepath.Base(p))
		}
	}
}

// TestGroupMicroCPUBasis: when a row and its peer both report CPU time per
// op, the ratio is taken on it; when the peer lacks it, on wall ns/op.
func TestGroupMicroCPUBasis(t *testing.T) {
	line := func(s string) gobench.Result {
		r, err := gobench.ParseLine(s)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	res := []gobench.Result{
		line("BenchmarkJSON/twitter/simdedge-2 100 1000 ns/op 400 cpu-ns/op"),
		line("BenchmarkJSON/twitter/simdedge-2 100 3000 ns/op 440 cpu-ns/op"),
		line("BenchmarkJSON/twitter/encoding_json-2 100 4000 ns/op 4000 cpu-ns/op"),
		line("BenchmarkJSON/twitter/encoding_json-2 100 4000 ns/op 4800 cpu-ns/op"),
		line("BenchmarkJSON/canada/simdedge-2 100 1000 ns/op 500 cpu-ns/op"),
		line("BenchmarkJSON/canada/encoding_json-2 100 3000 ns/op"),
	}
	g := GroupMicro(res, map[string]AreaSpec{"JSON": {Section: "json", Peer: PeerRef{Impl: "encoding_json"}, Ours: []string{"simdedge"}}})
	if len(g) != 1 || len(g[0].Rows) != 4 {
		t.Fatalf("groups %+v", g)
	}
	tw, ca := g[0].Rows[0], g[0].Rows[2]
	// Per-round ratios: 4000/400 = 10 and 4800/440 = 10.9.
	if tw.Basis != "cpu-ns/op" || math.Abs(tw.Speedup-4400.0/420) > 1e-9 || math.Abs(tw.SpeedupLo-10) > 1e-9 || math.Abs(tw.SpeedupHi-4800.0/440) > 1e-9 {
		t.Errorf("twitter: basis %q speedup %v [%v]", tw.Basis, tw.Speedup, tw.SpeedupLo)
	}
	if ca.Basis != "ns/op" || math.Abs(ca.Speedup-3) > 1e-9 {
		t.Errorf("canada (peer without CPU time): basis %q speedup %v", ca.Basis, ca.Speedup)
	}
	var b strings.Builder
	writeMicro(&b, g[0], nil)
	if !strings.Contains(b.String(), "| cpu-ns/op |") {
		t.Errorf("the table does not name the basis:\n%s", b.String())
	}
}
