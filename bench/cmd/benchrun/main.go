// Command benchrun is simdedge's benchmark suite in one command: the micro
// benchmarks (URL, HTTP and JSON parsers, asm kernels) beside their peers,
// and load benchmarks of simdedge, net/http, fasthttp and nginx as origins
// and of simdedge, httputil.ReverseProxy and nginx as proxies (and of
// simdedge's balancing policies and nginx's in front of a pool, and of
// simdedge and nginx over TLS: keep-alive and handshake rate), driven by
// wrk. It writes bench/results/<date>-<host>.md with tables of medians and
// ratios against the peer measured in the same run, SVG plots beside it,
// and the raw results in benchstat format (<date>-<host>.txt).
//
// Usage (from the bench module, or `make bench` at the root):
//
//	go run ./cmd/benchrun [-quick] [-areas url,http,json,asm,xdp,rdma,origin,pipelined,proxy,balance,https,gzip,h2,observe]
//
// A peer that cannot run (nginx not installed, simdedge serve not ready)
// becomes a note in the report; the others still run.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/simdedge/simdedge/asm"
	"github.com/simdedge/simdedge/bench/internal/gobench"
	"github.com/simdedge/simdedge/bench/internal/progress"
	"github.com/simdedge/simdedge/bench/internal/report"
	"github.com/simdedge/simdedge/bench/internal/sysinfo"
)

// Area names accepted by -areas; "micro", "load" and "all" expand.
var (
	microNames = []string{"url", "http", "json", "asm", "xdp", "rdma"}
	loadNames  = []string{"origin", "pipelined", "proxy", "balance", "https", "gzip", "h2", "observe"}
)

// enumerateEstimate is the planned seconds to build and enumerate one
// micro area before its real run.
const enumerateEstimate = 15.0

type config struct {
	areas []string
	quick bool
	micro microOpts
	// microSet says -count or -benchtime was given: it then applies to
	// every area.
	microSet bool
	load     loadOpts
	out      string
	install  bool
	engines  []string // simdedge engines to load; empty: the default
	// loopTLSOff adds the https area's row of the loop engine with
	// SIMDEDGE_LOOP_TLS=off.
	loopTLSOff bool
}

func main() {
	os.Exit(run())
}

func run() int {
	var (
		areas     = flag.String("areas", "all", "comma-separated: url,http,json,asm,xdp,rdma (or micro), origin,pipelined,proxy,balance,https,gzip,h2,observe (or load), all")
		quick     = flag.Bool("quick", false, "few rounds and short runs (a smoke run of the whole suite in a few minutes)")
		count     = flag.Int("count", 0, "micro rounds, each a go test -count 1 (default 10, quick 5)")
		benchtime = flag.String("benchtime", "", "go test -benchtime (default 1s, quick 100ms)")
		rounds    = flag.Int("rounds", 0, "interleaved wrk rounds per server (default 10, quick 2)")
		duration  = flag.Duration("duration", 0, "wrk duration per round (default 10s, quick 3s)")
		conns     = flag.Int("connections", 64, "wrk connections")
		out       = flag.String("out", "", "results directory (default <bench>/results)")
		install   = flag.Bool("install", true, "apt-get install wrk and nginx-light when missing")
		loopOff   = flag.Bool("https-loop-tls-off", false, "https area: also run the loop engine with "+loopTLSOff+" (TLS connections handed to goroutines)")
		engines   = flag.String("engines", "", "simdedge's kernel TCP engines to load, comma-separated (loop, goroutine; loop-proxy and loop-handoff: loop with proxy_on_loop true or false): the first is reported as simdedge, the others as simdedge-<engine>; empty runs the configuration's default")
	)
	flag.Parse()
	cfg := config{quick: *quick, install: *install, loopTLSOff: *loopOff}
	if *engines != "" {
		cfg.engines = strings.Split(*engines, ",")
	}
	cfg.micro = microOpts{count: 10, benchtime: "1s"}
	// Ten rounds: with six (benchstat's minimum) the median's 95 %
	// interval is the min–max, so one disturbed round of the shared
	// machine set it; with ten it is the 2nd smallest to the 2nd largest.
	cfg.load = loadOpts{rounds: 10, duration: 10 * time.Second, warmup: 2 * time.Second, conns: *conns}
	if *quick {
		// Five rounds: a median of three is one disturbed round away
		// from a wrong ratio on a busy machine.
		cfg.micro = microOpts{count: 5, benchtime: "100ms"}
		cfg.load = loadOpts{rounds: 2, duration: 3 * time.Second, warmup: time.Second, conns: *conns}
	}
	if *count > 0 {
		cfg.micro.count = *count
		cfg.microSet = true
	}
	if *benchtime != "" {
		cfg.micro.benchtime = *benchtime
		cfg.microSet = true
	}
	if *rounds > 0 {
		cfg.load.rounds = *rounds
	}
	if *duration > 0 {
		cfg.load.duration = *duration
	}
	cfg.micro.perRun = estimateRun(cfg.micro.benchtime)
	var err error
	if cfg.areas, err = parseAreas(*areas); err != nil {
		fmt.Fprintln(os.Stderr, "benchrun:", err)
		return 2
	}
	bench, err := findBench()
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchrun:", err)
		return 2
	}
	cfg.out = *out
	if cfg.out == "" {
		cfg.out = filepath.Join(bench, "results")
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	// Whatever happens below, the servers this run started are stopped.
	defer stopAll()
	// The command as a user would type it (go run's binary lives in a
	// temporary directory).
	command := strings.Join(append([]string{"go run ./cmd/benchrun"}, os.Args[1:]...), " ")
	md, err := suite(ctx, cfg, bench, command)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchrun:", err)
		return 1
	}
	fmt.Println("report:", md)
	return 0
}

// microFor is the go test settings of area a.
func (c config) microFor(a microArea) microOpts {
	o := c.micro
	if c.quick || c.microSet || a.fullCount == 0 {
		return o
	}
	o.count, o.benchtime = a.fullCount, a.fullBenchtime
	o.perRun = estimateRun(o.benchtime)
	return o
}

// estimateRun is the planned seconds of one benchmark run: the testing
// package grows b.N until the bench time is reached, which costs about a
// third more than the bench time itself.
func estimateRun(benchtime string) float64 {
	const growth, fixed = 1.3, 0.05
	if d, err := time.ParseDuration(benchtime); err == nil {
		return d.Seconds()*growth + fixed
	}
	return fixed
}

// pipelineDepth is the requests per write of the pipelined origin scenario
// (TechEmpower's plaintext test uses 16).
const pipelineDepth = 16

func allAreas() []string { return append(slices.Clone(microNames), loadNames...) }

func parseAreas(s string) ([]string, error) {
	var out []string
	for _, a := range strings.Split(s, ",") {
		a = strings.TrimSpace(a)
		var add []string
		switch {
		case a == "all":
			add = allAreas()
		case a == "micro":
			add = microNames
		case a == "load":
			add = loadNames
		case slices.Contains(microNames, a) || slices.Contains(loadNames, a):
			add = []string{a}
		default:
			return nil, fmt.Errorf("unknown area %q (want %s, micro, load or all)", a, strings.Join(append(slices.Clone(microNames), loadNames...), ", "))
		}
		for _, x := range add {
			if !slices.Contains(out, x) {
				out = append(out, x)
			}
		}
	}
	return out, nil
}

// findBench locates the bench module from the working directory (the
// bench module itself, or the repository root).
func findBench() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for _, d := range []string{wd, filepath.Join(wd, "bench")} {
		if fileExists(filepath.Join(d, "cmd", "benchrun", "main.go")) && fileExists(filepath.Join(d, "go.mod")) {
			return d, nil
		}
	}
	return "", fmt.Errorf("run from the bench module or the repository root (no cmd/benchrun under %s)", wd)
}

func suite(ctx context.Context, cfg config, bench, command string) (string, error) {
	repo := filepath.Dir(bench)
	info := sysinfo.Collect(repo)
	rep := &report.Report{Info: info, SIMD: asm.Active().String(), Start: time.Now(), LoadStart: info.LoadAvg,
		Quick: cfg.quick, Command: command}
	if err := os.MkdirAll(cfg.out, 0o755); err != nil {
		return "", err
	}
	bar := progress.New(os.Stderr, progress.IsTerminal(os.Stderr))
	defer bar.Close()
	note := func(format string, args ...any) {
		n := fmt.Sprintf(format, args...)
		rep.Notes = append(rep.Notes, n)
		bar.Logf("note: %s", n)
	}
	tmp, err := os.MkdirTemp("", "benchrun-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	e := &env{repo: repo, bench: bench, tmp: tmp}

	var micro []microArea
	for _, a := range microAreas {
		if slices.Contains(cfg.areas, a.name) {
			micro = append(micro, a)
		}
	}
	var wantLoad []string
	for _, a := range loadNames {
		if slices.Contains(cfg.areas, a) {
			wantLoad = append(wantLoad, a)
		}
	}
	bar.AddPlan(enumerateEstimate * float64(len(micro)))
	if len(wantLoad) > 0 {
		bar.AddPlan(enumerateEstimate)
	}

	// Build and enumerate first, so the plan is complete before the long
	// part and a broken area shows up within a minute.
	planned := map[string]float64{}
	bins := map[string]string{}
	for _, a := range micro {
		if a.missing != nil {
			if why := a.missing(); why != "" {
				note("micro %s: %s; area skipped", a.name, why)
				bar.Done(enumerateEstimate)
				continue
			}
		}
		bar.Set("micro "+a.name, "building and enumerating")
		bin, n, skips, err := enumerate(ctx, e, a)
		bins[a.name] = bin
		bar.Done(enumerateEstimate)
		for _, s := range skips {
			note("%s: %s", a.name, s)
		}
		if err != nil {
			note("micro %s: %v", a.name, err)
		}
		if n == 0 {
			note("micro %s: no benchmarks ran; area skipped", a.name)
			continue
		}
		o := cfg.microFor(a)
		planned[a.name] = float64(n*o.count) * o.perRun
		bar.AddPlan(planned[a.name])
	}
	var scenarios []scenario
	if len(wantLoad) > 0 {
		bar.Set("load", "installing and building servers")
		scenarios = prepareLoad(ctx, cfg, e, wantLoad, note)
		bar.Done(enumerateEstimate)
		for _, s := range scenarios {
			bar.AddPlan(s.plan(cfg.load))
		}
	}
	rep.Settings = settings(cfg, e, micro, len(scenarios) > 0)
	bar.Logf("plan: about %s of measurement after %s of building (planned bench times plus overheads; the status line updates the estimate as it goes)",
		bar.Planned().Round(time.Minute), time.Since(rep.Start).Round(time.Second))

	var results, asmResults []gobench.Result
	var raw strings.Builder
	for _, a := range micro {
		p, ok := planned[a.name]
		if !ok || ctx.Err() != nil {
			continue
		}
		mr := runMicro(ctx, e, bar, a, bins[a.name], cfg.microFor(a), p)
		results = append(results, mr.results...)
		if a.name == "asm" {
			asmResults = mr.results
		}
		if rep.RoundOthers == nil {
			rep.RoundOthers = map[string][]float64{}
		}
		rep.RoundOthers[a.name] = mr.others
		raw.WriteString(mr.raw)
		for _, n := range mr.notes {
			note("%s", n)
		}
	}
	var levels []string
	for _, l := range asm.Levels() {
		levels = append(levels, l.String())
	}
	specs := areaSpecs(levels)
	addAsmSpecs(specs, asmResults, levels)
	rep.Micro = report.GroupMicro(results, specs)
	for _, s := range scenarios {
		if ctx.Err() != nil {
			break
		}
		l := s.run(ctx, e, bar, cfg.load)
		rep.Load = append(rep.Load, l)
	}
	if len(rep.Load) > 0 {
		raw.WriteString("pkg: github.com/simdedge/simdedge/bench/load\n")
		for _, l := range rep.Load {
			var sb strings.Builder
			if err := l.WriteBenchstat(&sb); err != nil {
				return "", err
			}
			raw.WriteString(sb.String())
		}
	}
	if ctx.Err() != nil {
		note("run interrupted (%v): results are partial", ctx.Err())
	}
	rep.End = time.Now()
	rep.LoadEnd = sysinfo.LoadAvg()
	base := resultBase(rep.Start, info.Host, cfg.quick)
	if !slices.Equal(cfg.areas, allAreas()) {
		// A partial run never replaces the full report of the same day.
		base += "-" + strings.Join(cfg.areas, "+")
	}
	rep.Benchstat = base + ".txt"
	if err := os.WriteFile(filepath.Join(cfg.out, rep.Benchstat), []byte(raw.String()), 0o644); err != nil {
		return "", err
	}
	bar.Close()
	md, err := rep.WriteFiles(cfg.out, base)
	if err != nil {
		return "", err
	}
	fmt.Print(rep.SummaryTable())
	return md, nil
}

// resultBase is "<date>-<host>", with "-quick" for quick runs so that a
// smoke run never replaces a full run's report of the same day.
func resultBase(t time.Time, host string, quick bool) string {
	host = strings.Map(func(r rune) rune {
		if r == '/' || r == ' ' {
			return '_'
		}
		return r
	}, host)
	if host == "" {
		host = "unknown"
	}
	b := t.UTC().Format("2006-01-02") + "-" + host
	if quick {
		b += "-quick"
	}
	return b
}

// prepareLoad installs and builds what the load scenarios need and returns
// the scenarios that can run; everything missing becomes a note.
func prepareLoad(ctx context.Context, cfg config, e *env, want []string, note func(string, ...any)) []scenario {
	if cfg.install {
		for _, n := range installMissing(ctx, func(f string, a ...any) { note(f, a...) }) {
			note("%s", n)
		}
	}
	e.wrk = lookTool("wrk")
	e.nginx = lookTool("nginx")
	e.h2o = lookTool("h2o")
	e.taskset = lookTool("taskset")
	if e.wrk == "" {
		note("wrk is not installed: load benchmarks skipped (apt-get install wrk)")
		return nil
	}
	if runtime.NumCPU() >= 2 && e.taskset != "" {
		e.serverCPU, e.clientCPU = "0", "1"
	} else {
		note("load servers and wrk are not pinned apart (need taskset and 2 CPUs; have %d CPUs, taskset %q)", runtime.NumCPU(), e.taskset)
	}
	if e.nginx == "" {
		note("nginx is not installed: the nginx rows are empty (apt-get install nginx-light)")
	}
	e.peerBin = filepath.Join(e.tmp, "benchpeer")
	if out, err := runCmd(ctx, e.bench, "go", "build", "-o", e.peerBin, "./cmd/benchpeer"); err != nil {
		note("building benchpeer failed (%v): %s; load benchmarks skipped", err, lastLine(out))
		return nil
	}
	bin := filepath.Join(e.tmp, "simdedge")
	if out, err := runCmd(ctx, e.repo, "go", "build", "-o", bin, "./cmd/simdedge"); err != nil {
		e.simdedgeErr = fmt.Sprintf("go build ./cmd/simdedge failed: %s", lastLine(out))
	} else {
		e.simdedgeBin = bin
	}
	nginx, netHTTP, fasthttp := nginxServer(), peerServer("net_http"), peerServer("fasthttp")
	// ours is simdedge on each engine asked for: the first is the row
	// named simdedge, the others simdedge-<engine>.
	ours := func(peers ...serverSpec) []serverSpec {
		if len(cfg.engines) == 0 {
			return append([]serverSpec{simdedgeServer("simdedge", "")}, peers...)
		}
		var out []serverSpec
		for i, eng := range cfg.engines {
			name := "simdedge"
			if i > 0 {
				name += "-" + eng
			}
			out = append(out, simdedgeServer(name, eng))
		}
		return append(out, peers...)
	}
	var out []scenario
	if slices.Contains(want, "origin") {
		// H2O and nginx are the C peers; the pairs give simdedge's CPU
		// per request over theirs round by round.
		out = append(out, scenario{kind: "origin", peer: "net_http",
			servers: ours(netHTTP, fasthttp, nginx, h2oServer()),
			pairs:   []report.Pair{{Num: "simdedge", Den: "nginx"}, {Num: "simdedge", Den: h2oName}}})
	}
	if slices.Contains(want, "pipelined") {
		out = append(out, scenario{kind: "origin-pipelined", peer: "net_http", pipeline: pipelineDepth,
			servers: ours(netHTTP, fasthttp, nginx)})
	}
	if slices.Contains(want, "proxy") {
		// The backend is nginx, the fastest origin here, so that the
		// proxy is the bottleneck; fasthttp when nginx is missing.
		backend := nginx
		if e.nginx == "" {
			backend = fasthttp
		}
		out = append(out, scenario{kind: "proxy", peer: "httputil", backend: &backend,
			servers: ours(peerServer("httputil"), nginx)})
	}
	if slices.Contains(want, "balance") {
		// The pool is one nginx with a server block per target (fasthttp
		// processes when nginx is missing; the nginx row is then empty).
		backend := nginx
		if e.nginx == "" {
			backend = fasthttp
		}
		engine := ""
		if len(cfg.engines) > 0 {
			engine = cfg.engines[0]
		}
		out = append(out, balanceScenario(engine, backend))
	}
	if slices.Contains(want, "observe") {
		backend := nginx
		if e.nginx == "" {
			backend = fasthttp
		}
		engine := ""
		if len(cfg.engines) > 0 {
			engine = cfg.engines[0]
		}
		out = append(out, observeScenario(engine, backend))
	}
	if slices.Contains(want, "https") {
		// The simdedge rows are the engines themselves (-engines does
		// not apply): the targets compare loop, goroutine and nginx.
		if err := prepareHTTPS(ctx, e); err != nil {
			note("https: %v", err)
		}
		out = append(out, httpsScenarios(cfg.loopTLSOff)...)
	}
	if slices.Contains(want, "gzip") {
		out = append(out, gzipAreaScenario(ctx, e, note))
	}
	if slices.Contains(want, "h2") {
		e.h2load = lookTool("h2load")
		if e.h2load == "" {
			note("h2: %v", errNoH2load)
		}
		out = append(out, h2Scenarios(nginx)...)
	}
	return out
}

func settings(cfg config, e *env, micro []microArea, load bool) []string {
	var s []string
	if len(micro) > 0 {
		line := fmt.Sprintf("micro: %d rounds of the go test -c binary with -test.bench -test.benchmem -test.count 1 -test.benchtime %s (rounds interleave the implementations; medians over rounds)",
			cfg.micro.count, cfg.micro.benchtime)
		for _, a := range micro {
			if o := cfg.microFor(a); o.count != cfg.micro.count || o.benchtime != cfg.micro.benchtime {
				line += fmt.Sprintf("; %s: %d rounds of %s", a.name, o.count, o.benchtime)
			}
		}
		s = append(s, line)
	}
	if load {
		s = append(s, fmt.Sprintf("load: wrk -t1 -c%d -d%s --latency, %d rounds, %s warm-up; servers on CPU %s, wrk on CPU %s",
			cfg.load.conns, cfg.load.duration, cfg.load.rounds, cfg.load.warmup, orDash(e.serverCPU), orDash(e.clientCPU)))
	}
	return s
}

func orDash(s string) string {
	if s == "" {
		return "(unpinned)"
	}
	return s
}
