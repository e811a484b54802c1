package main

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/simdedge/simdedge/bench/internal/gobench"
	"github.com/simdedge/simdedge/bench/internal/report"
	simdconfig "github.com/simdedge/simdedge/server/config"
)

func TestParseAreas(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"all", []string{"url", "http", "json", "asm", "xdp", "rdma", "origin", "pipelined", "proxy", "balance", "https", "gzip", "h2", "observe"}},
		{"micro", []string{"url", "http", "json", "asm", "xdp", "rdma"}},
		{"rdma", []string{"rdma"}},
		{"load,url", []string{"origin", "pipelined", "proxy", "balance", "https", "gzip", "h2", "observe", "url"}},
		{"gzip", []string{"gzip"}},
		{"h2", []string{"h2"}},
		{"observe", []string{"observe"}},
		{"balance", []string{"balance"}},
		{"https", []string{"https"}},
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
	for _, upstreams := range [][]string{nil, {"127.0.0.1:9"}} {
		s, err := nginxConfig("/tmp/x", []int{1234}, upstreams)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"daemon off;", "pid /tmp/x/nginx.pid;", "listen 127.0.0.1:1234;", "access_log off;"} {
			if !strings.Contains(s, want) {
				t.Errorf("upstreams %q: config lacks %q", upstreams, want)
			}
		}
		if proxy := strings.Contains(s, "proxy_pass http://backend;") && strings.Contains(s, "server 127.0.0.1:9;"); proxy != (upstreams != nil) {
			t.Errorf("upstreams %q: proxy section present = %v\n%s", upstreams, proxy, s)
		}
		if !proxyOrBody(s, upstreams != nil) {
			t.Errorf("upstreams %q: wrong location body\n%s", upstreams, s)
		}
		if strings.Count(s, "{") != strings.Count(s, "}") {
			t.Errorf("unbalanced braces:\n%s", s)
		}
	}
}

// proxyOrBody reports whether the config's locations proxy (proxy) or
// answer the response body (!proxy), and never both.
func proxyOrBody(s string, proxy bool) bool {
	hasProxy := strings.Contains(s, "proxy_pass")
	hasBody := strings.Contains(s, `return 200 "hello, world\n";`)
	return hasProxy == proxy && hasBody == !proxy
}

// TestNginxConfPool: the balance scenario's backend is one nginx with a
// server block per target, and its nginx row an upstream of every target.
func TestNginxConfPool(t *testing.T) {
	s, err := nginxConfig("/tmp/x", []int{9001, 9002, 9003}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(s, "    server {"); n != 3 {
		t.Errorf("server blocks = %d, want 3:\n%s", n, s)
	}
	for _, port := range []string{"9001", "9002", "9003"} {
		if strings.Count(s, "listen 127.0.0.1:"+port+";") != 1 {
			t.Errorf("config does not listen on %s once:\n%s", port, s)
		}
	}
	if strings.Count(s, `return 200 "hello, world\n";`) != 3 || strings.Contains(s, "upstream") {
		t.Errorf("pool targets must each answer the body and proxy nothing:\n%s", s)
	}
	pool := []string{"127.0.0.1:9001", "127.0.0.1:9002", "127.0.0.1:9003"}
	s, err = nginxConfig("/tmp/x", []int{1234}, pool)
	if err != nil {
		t.Fatal(err)
	}
	up := s[strings.Index(s, "upstream backend {"):]
	up = up[:strings.Index(up, "}")]
	for _, target := range pool {
		if strings.Count(up, "server "+target+";") != 1 {
			t.Errorf("upstream lacks %s once:\n%s", target, up)
		}
	}
	// Round robin is nginx's default: no other method in the block.
	for _, method := range []string{"least_conn", "hash", "random", "ip_hash"} {
		if strings.Contains(up, method) {
			t.Errorf("upstream has %s, want round robin:\n%s", method, up)
		}
	}
	if !strings.Contains(up, "keepalive 256;") || strings.Count(s, "    server {") != 1 || !proxyOrBody(s, true) {
		t.Errorf("want one proxying server block with an upstream keep-alive pool:\n%s", s)
	}
}

func TestSimdedgeConf(t *testing.T) {
	s, err := simdedgeConfig(1, []string{"127.0.0.1:2"}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`listen: "127.0.0.1:1"`, `targets: ["127.0.0.1:2"]`, "proxy: {upstream: backend}"} {
		if !strings.Contains(s, want) {
			t.Errorf("config lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "balance:") || strings.Contains(s, "health:") {
		t.Errorf("no balancing given, yet the config sets it:\n%s", s)
	}
}

// TestSimdedgeConfBalance: the balance scenario's simdedge rows name every
// target, their policy and their passive health, in the keys simdedge's
// own parser (server/config, as `simdedge check` runs it) reads back.
func TestSimdedgeConfBalance(t *testing.T) {
	pool := []string{"127.0.0.1:9001", "127.0.0.1:9002", "127.0.0.1:9003"}
	for _, tc := range []struct {
		b        *Balancing
		policy   string
		failures int
		ejectFor time.Duration
	}{
		{&balanceBaseline, "round_robin", 0, 0},
		{&balanceP2CHealth, "p2c", 5, 30 * time.Second},
	} {
		s, err := simdedgeConfig(1, pool, "loop-proxy", tc.b)
		if err != nil {
			t.Fatal(err)
		}
		c, err := simdconfig.Parse([]byte(s))
		if err != nil {
			t.Fatalf("%s: simdedge's parser rejects the generated config: %v\n%s", tc.policy, err, s)
		}
		if len(c.Upstreams) != 1 {
			t.Fatalf("%s: upstreams = %d, want 1:\n%s", tc.policy, len(c.Upstreams), s)
		}
		u := c.Upstreams[0]
		var targets []string
		for _, tg := range u.Targets {
			targets = append(targets, tg.Address)
		}
		if !slices.Equal(targets, pool) || u.Balance != tc.policy || c.Engine != "loop" || c.ProxyOnLoop == nil || !*c.ProxyOnLoop {
			t.Errorf("%s: parsed targets %v, balance %q, engine %q:\n%s", tc.policy, targets, u.Balance, c.Engine, s)
		}
		p := u.Health.Passive
		if p.ConsecutiveFailures == nil || *p.ConsecutiveFailures != tc.failures || time.Duration(p.EjectFor) != tc.ejectFor {
			t.Errorf("%s: passive %+v, want %d failures, eject_for %v:\n%s", tc.policy, p, tc.failures, tc.ejectFor, s)
		}
	}
}

// TestBalanceScenario: the rows, benchmark names and pairs line up: every
// pair and benchmark name refers to a row, and the names put the policies
// side by side for benchstat -col /policy.
func TestBalanceScenario(t *testing.T) {
	s := balanceScenario("", nginxServer())
	if s.targets != poolTargets || s.backend == nil || s.backend.startPool == nil {
		t.Fatalf("want a pool of %d targets served by one nginx, got targets %d", poolTargets, s.targets)
	}
	rows := map[string]bool{}
	for _, sp := range s.servers {
		rows[sp.name] = true
		if s.bench[sp.name] == "" {
			t.Errorf("row %s has no benchmark name", sp.name)
		}
	}
	if !rows[s.peer] || len(rows) != 3 {
		t.Errorf("rows %v, peer %s", rows, s.peer)
	}
	for _, p := range s.pairs {
		if !rows[p.Num] || !rows[p.Den] {
			t.Errorf("pair %+v names a missing row", p)
		}
	}
	rr, p2c := s.bench[balanceRR], s.bench[balanceP2C]
	if strings.Replace(rr, "policy=rr", "policy=p2c", 1) != p2c {
		t.Errorf("benchmark names %q and %q differ in more than /policy", rr, p2c)
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

func TestWrkScript(t *testing.T) {
	dir := t.TempDir()
	path, err := wrkScript(dir, 16)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"for i = 1, 16 do", "wrk.format()", "request = function() return batch end",
		"done = function(summary, latency, requests)", "benchrun-hist "} {
		if !strings.Contains(string(b), want) {
			t.Errorf("script lacks %q:\n%s", want, b)
		}
	}
	again, err := wrkScript(dir, 16)
	if err != nil || again != path {
		t.Errorf("second call = %q, %v; want the same file", again, err)
	}
	// One request at a time: no request() (wrk keeps its static request
	// path), but the done() dump.
	path, err = wrkScript(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); strings.Contains(string(b), "request =") || !strings.Contains(string(b), "done = function") {
		t.Errorf("unpipelined script:\n%s", b)
	}
}

// pipelinedRound is wrk's printout of round 3 of simdedge in the pipelined
// origin scenario of the 2026-11-22 full run (p90 and p99 printed as 0),
// with, when hist is set, what benchrun's done() adds.
func pipelinedRound(hist string) []byte {
	out := `Running 10s test @ http://127.0.0.1:40000/
  1 threads and 64 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency   370.00us  400.00us  12.00ms   90.00%
    Req/Sec     1.05M    50.00k    1.10M    70.00%
  Latency Distribution
     50%  378.00us
     75%  529.00us
     90%    0.00us
     99%    0.00us
  10481216 requests in 10.00s, 1.25GB read
Requests/sec: 1048121.60
Transfer/sec:    128.00MB
`
	if hist != "" {
		out += "benchrun-wrk duration=10000000 requests=10481216 cpu=9.800000\nbenchrun-hist " + hist + "\n"
	}
	return []byte(out)
}

// The report showed p99 "0 ns" for simdedge in the pipelined table: wrk
// 4.1 printed 0 (its coordinated-omission correction loses counts below the
// smallest latency) and benchrun took it as a latency. Now the percentiles
// come from wrk's histogram with the correction undone, and a zero wrk
// prints is never a latency: neither the table nor the benchstat file may
// hold a zero percentile.
func TestLoadNeverReportsZeroLatency(t *testing.T) {
	// Batches of 16 at 300-2,000 µs; the correction interval is 61 µs.
	var hist []string
	for v := 300; v <= 2000; v += 50 {
		hist = append(hist, fmt.Sprintf("%d:%d", v, 3))
	}
	for _, tc := range []struct {
		name, hist string
		partial    bool
	}{
		{"histogram", strings.Join(hist, " "), false},
		{"printout only", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var rounds []report.Round
			for range 6 {
				w, err := wrkResult(pipelinedRound(tc.hist), time.Second, 64)
				if err != nil {
					t.Fatal(err)
				}
				rounds = append(rounds, report.Round{Wrk: w, CPU: 9 * time.Second, WrkCPU: w.WrkCPU, Wall: 10 * time.Second})
			}
			ok := rounds[0]
			ok.Wrk.Latency = map[float64]time.Duration{50: 300 * time.Microsecond, 75: 400 * time.Microsecond, 90: 500 * time.Microsecond, 99: time.Millisecond}
			rounds = append(rounds, ok)
			l := report.Load{Kind: "origin-pipelined", Peer: "simdedge", Rows: []report.LoadRow{{Server: "simdedge", Rounds: rounds}}}
			rep := &report.Report{Load: []report.Load{l}}
			var md strings.Builder
			if err := rep.WriteMarkdown(&md, nil); err != nil {
				t.Fatal(err)
			}
			table := md.String()[strings.Index(md.String(), "## Load"):]
			if strings.Contains(table, "| 0 ns |") || strings.Contains(table, " 0 ns (") {
				t.Errorf("a zero latency in the table:\n%s", table)
			}
			if got := strings.Contains(table, "(1 of 7 rounds)"); got != tc.partial {
				t.Errorf("partial percentile marked = %v, want %v:\n%s", got, tc.partial, table)
			}
			if !tc.partial && !strings.Contains(table, "| 2.00 ms |") {
				// 2,000 µs is the p99 of the recorded batches in 6 of 7
				// rounds.
				t.Errorf("p99 from the histogram missing:\n%s", table)
			}
			var bs strings.Builder
			if err := l.WriteBenchstat(&bs); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(bs.String(), "\t0.000000000 p") {
				t.Errorf("a zero percentile in the benchstat lines:\n%s", bs.String())
			}
			if !strings.Contains(bs.String(), "wrk-cpu-sec/req") {
				t.Errorf("no wrk CPU in the benchstat lines:\n%s", bs.String())
			}
		})
	}
}

// The FiPingpong table said "Peer: “" and "n/a": an area without a peer
// must say what it is instead, and have no ratio column.
func TestEveryAreaHasPeerOrReference(t *testing.T) {
	specs := areaSpecs([]string{"generic", "avx2", "avx512"})
	for area, s := range specs {
		if s.Peer.Impl == "" && s.Reference == "" {
			t.Errorf("area %s has neither a peer nor a reference text", area)
		}
	}
	// A kernel that areaSpecs does not name yet gets the kernels' peer.
	k, err := gobench.ParseLine("BenchmarkNewKernel/4096/level=avx2-2 1000 90 ns/op")
	if err != nil {
		t.Fatal(err)
	}
	addAsmSpecs(specs, []gobench.Result{k}, []string{"generic", "avx2"})
	if s := specs["NewKernel"]; s.Peer.Impl != "level=generic" {
		t.Errorf("new asm kernel's spec = %+v", s)
	}
	rs := parseLines(t,
		"BenchmarkTransportVsTCP/pingpong/rdma-2 1000 90000 ns/op 80000 cpu-ns/op",
		"BenchmarkTransportVsTCP/pingpong/kernel_tcp-2 1000 30000 ns/op 20000 cpu-ns/op",
		"BenchmarkFiPingpong/tcp/64B-2 1000 40000 ns/op 45000 cpu-ns/op",
	)
	rep := &report.Report{Micro: report.GroupMicro(rs, specs)}
	var md strings.Builder
	if err := rep.WriteMarkdown(&md, nil); err != nil {
		t.Fatal(err)
	}
	s := md.String()
	if strings.Contains(s, "Peer: ``") {
		t.Errorf("empty peer in the report:\n%s", s)
	}
	// The only n/a left is the interval of a single sample.
	fi := s[strings.Index(s, "## FiPingpong"):]
	if !strings.Contains(fi, "No peer: libfabric's own fi_pingpong") || strings.Contains(fi, "× vs peer") || strings.Count(fi, "n/a") > 1 {
		t.Errorf("FiPingpong section:\n%s", fi)
	}
}

// TestRoundOrder: alternating scenarios reverse every other round, others
// keep their order, and the servers' own slice is never reordered.
func TestRoundOrder(t *testing.T) {
	ls := []live{{port: 1}, {port: 2}, {port: 3}}
	ports := func(l []live) []int {
		var p []int
		for _, sv := range l {
			p = append(p, sv.port)
		}
		return p
	}
	for r, want := range [][]int{{1, 2, 3}, {3, 2, 1}, {1, 2, 3}} {
		if got := ports(roundOrder(ls, r, true)); !slices.Equal(got, want) {
			t.Errorf("alternate round %d: %v, want %v", r, got, want)
		}
		if got := ports(roundOrder(ls, r, false)); !slices.Equal(got, []int{1, 2, 3}) {
			t.Errorf("round %d: %v, want the servers' order", r, got)
		}
	}
	if got := ports(ls); !slices.Equal(got, []int{1, 2, 3}) {
		t.Errorf("servers reordered in place: %v", got)
	}
}

// TestGzipConfigs: the gzip area's generated configurations name the
// file's directory, level 5 on both sides, and the JSON type.
func TestGzipConfigs(t *testing.T) {
	conf, err := simdedgeGzipConfig(8080, "loop", "/tmp/www")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`files: {root: "/tmp/www"}`, "levels: {gzip: 5}", "encodings: [gzip]", "engine: loop", "types: [application/json]"} {
		if !strings.Contains(conf, want) {
			t.Errorf("simdedge config lacks %q:\n%s", want, conf)
		}
	}
	conf, err = nginxGzipConfig("/tmp/n", 8081, "/tmp/www")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"gzip on;", "gzip_comp_level 5;", "gzip_types application/json;", "root /tmp/www;", "application/json json;"} {
		if !strings.Contains(conf, want) {
			t.Errorf("nginx config lacks %q:\n%s", want, conf)
		}
	}
}

// TestParseH2load reads h2load's summary into wrk's shape.
func TestParseH2load(t *testing.T) {
	out := []byte(`starting benchmark...
finished in 5.00s, 10899.80 req/s, 362.07KB/s
requests: 54499 total, 54599 started, 54499 done, 54490 succeeded, 6 failed, 3 errored, 0 timeout
status codes: 54499 2xx, 0 3xx, 0 4xx, 0 5xx
                     min         max         mean         sd        +/- sd
time for request:       42us    523.69ms     20.58ms     61.91ms    93.83%
`)
	w, err := parseH2load(out)
	if err != nil || w.Requests != 54490 || w.SocketErrors != 9 || w.Duration != 5*time.Second || w.RPS != 10899.80 || w.Latency[50] != 20580*time.Microsecond {
		t.Fatalf("%+v %v", w, err)
	}
	if _, err := parseH2load([]byte("finished in 1s, 0 req/s\n")); err == nil {
		t.Fatal("no requests line: no error")
	}
}

// TestObserveConfigs: the observe area's generated configurations carry
// the keys it compares (simdedge's pass `simdedge check` when the area
// runs; here their shape).
func TestObserveConfigs(t *testing.T) {
	on, err := simdedgeConfigExtra(8080, []string{"127.0.0.1:9000"}, "", nil, nil, "access_log: {path: \"/tmp/a.log\", format: json}\nrequest_id: {}")
	if err != nil || !strings.Contains(on, "\naccess_log: {path: \"/tmp/a.log\", format: json}\nrequest_id: {}") {
		t.Errorf("simdedge observed config: %v\n%s", err, on)
	}
	logged, err := nginxConfigLog("/tmp/n", []int{8080}, []string{"127.0.0.1:9000"}, nil, "/tmp/n/access.log")
	if err != nil || !strings.Contains(logged, "access_log /tmp/n/access.log edge buffer=64k flush=1s;") || !strings.Contains(logged, "proxy_set_header X-Request-Id $request_id;") {
		t.Errorf("nginx logged config: %v\n%s", err, logged)
	}
	plain, err := nginxConfigLog("/tmp/n", []int{8080}, []string{"127.0.0.1:9000"}, nil, "")
	if err != nil || !strings.Contains(plain, "access_log off;") || strings.Contains(plain, "request_id") {
		t.Errorf("nginx plain config: %v\n%s", err, plain)
	}
}
