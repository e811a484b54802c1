package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/simdedge/simdedge/bench/internal/procstat"
	"github.com/simdedge/simdedge/bench/internal/progress"
	"github.com/simdedge/simdedge/bench/internal/report"
	"github.com/simdedge/simdedge/bench/internal/wrkout"
)

// loadOpts are the wrk settings shared by every scenario.
type loadOpts struct {
	rounds   int
	duration time.Duration
	warmup   time.Duration
	conns    int
	// pipeline is the number of requests wrk writes at once on a
	// connection (0: one at a time).
	pipeline int
	// https makes wrk use https (the https area); handshake replaces wrk
	// with hsload, a new TLS connection per request.
	https, handshake bool
	// path and headers are wrk's request path ("" is "/") and extra
	// fields ("Name: value"), from the scenario.
	path    string
	headers []string
	// h2 replaces wrk with h2load over h2c (the h2 area).
	h2 bool
}

// wrkSlack is added to a wrk run's timeout beyond its duration.
const wrkSlack = 30 * time.Second

// perRunOverhead estimates the time around one wrk run (process start,
// /proc reads) for the progress plan.
const perRunOverhead = 0.5

// startupEstimate is the planned seconds to start and check one server.
const startupEstimate = 2.0

// scenario is one load table: servers measured side by side.
type scenario struct {
	kind    string // "origin" or "proxy"
	peer    string
	servers []serverSpec
	// backend is the origin behind the proxies (nil for origins).
	backend *serverSpec
	// targets is the number of backend targets in the proxies' pool (0
	// or 1: one target).
	targets int
	// pairs are per-round ratios the report gives beside the peer's.
	pairs []report.Pair
	// bench names a row's benchmark line by server name (report.LoadRow.Bench).
	bench map[string]string
	// note is added to the scenario's setup text.
	note string
	// alternate reverses the servers' order every other round (A, B, C,
	// C, B, A, ...), so that no server always runs right after another:
	// a small budget (3 %) should not be met or missed by the order.
	alternate bool
	// pipeline makes wrk send this many requests per write (HTTP/1.1
	// pipelining), so that wrk's own cost per request stops capping the
	// fast servers: with one request at a time, wrk -t1 on one CPU tops
	// out near 80 k requests/s here, where nginx, fasthttp and simdedge
	// all end up.
	pipeline int
	// https serves the scenario over TLS with the run's certificate
	// (env.tls); handshake measures a new connection per request with
	// hsload instead of wrk's keep-alive.
	https, handshake bool
	// path and headers: the request wrk sends ("" is "/"; extra fields).
	path    string
	headers []string
	// h2 measures HTTP/2 (h2c) with h2load instead of wrk (h2.go).
	h2 bool
}

func (s scenario) plan(o loadOpts) float64 {
	perServer := startupEstimate + o.warmup.Seconds() + float64(o.rounds)*(o.duration.Seconds()+perRunOverhead)
	return float64(len(s.servers)) * perServer
}

// live is a started server under measurement.
type live struct {
	row  *report.LoadRow
	p    *proc
	port int
}

// run measures the scenario: every server is started once, then the
// rounds go A, B, C, A, B, C... so that a disturbance from the shared
// machine hits every server rather than one.
func (s scenario) run(ctx context.Context, e *env, bar *progress.Bar, o loadOpts) report.Load {
	l := report.Load{Kind: s.kind, Peer: s.peer, Rows: make([]report.LoadRow, len(s.servers))}
	pin := "unpinned (taskset unavailable or fewer than 2 CPUs)"
	if e.taskset != "" && e.serverCPU != "" {
		pin = fmt.Sprintf("server on CPU %s, wrk on CPU %s", e.serverCPU, e.clientCPU)
	}
	o.pipeline = s.pipeline
	o.https, o.handshake, o.h2 = s.https, s.handshake, s.h2
	o.path, o.headers = s.path, s.headers
	client := fmt.Sprintf("wrk -t1 -c%d -d%s --latency", o.conns, o.duration)
	if o.h2 {
		client = fmt.Sprintf("h2load -c%d -m%d -D%s", h2Conns, h2Streams, o.duration)
		pin = strings.Replace(pin, "wrk on", "h2load on", 1)
	}
	if o.handshake {
		client = fmt.Sprintf("hsload -conns %d -d %s (a new TLS connection per request)", o.conns, o.duration)
		pin = strings.Replace(pin, "wrk on", "hsload on", 1)
	}
	l.Setup = fmt.Sprintf("%s, %s, %d interleaved rounds after a %s warm-up per server.",
		client, pin, o.rounds, o.warmup)
	if s.alternate {
		l.Setup += " Every other round runs the servers in reverse order, so that none always follows another."
	}
	if o.pipeline > 0 {
		l.Setup += fmt.Sprintf(" Pipelined: wrk writes %d requests at a time on each connection (a Lua script), so the servers, not wrk, set the pace; latencies are per batch.", o.pipeline)
	}
	if s.note != "" {
		l.Setup += " " + s.note
	}
	for i, sp := range s.servers {
		l.Rows[i].Server = sp.name
		l.Rows[i].Bench = s.bench[sp.name]
	}
	l.Pairs = s.pairs
	area := "load " + s.kind
	var upstreams []string
	var backends []*proc
	if s.backend != nil {
		bar.Set(area, "starting backend "+s.backend.name)
		var err error
		backends, upstreams, err = s.startBackend(ctx, e)
		for _, bp := range backends {
			defer bp.stop()
		}
		if err != nil {
			for i := range l.Rows {
				l.Rows[i].Note = fmt.Sprintf("backend %s failed: %v", s.backend.name, err)
			}
			bar.Done(s.plan(o))
			return l
		}
		l.Backend = s.backend.name
		if len(upstreams) == 1 {
			l.Setup += fmt.Sprintf(" Backend: %s on %s, sharing wrk's CPU so that the proxy under test has its CPU to itself.", s.backend.name, upstreams[0])
		} else {
			how := fmt.Sprintf("%d processes", len(backends))
			if len(backends) == 1 {
				how = "one process, a server block per target"
			}
			l.Setup += fmt.Sprintf(" Backend: a pool of %d targets, %s (%s) on %s, sharing wrk's CPU so that the proxy under test has its CPU to itself.",
				len(upstreams), s.backend.name, how, strings.Join(upstreams, ", "))
		}
	}
	perServer := s.plan(o) / float64(len(s.servers))
	var ls []live
	for i, sp := range s.servers {
		bar.Set(area, "starting "+sp.name)
		port, err := freePort()
		var p *proc
		if err == nil {
			p, err = sp.start(e, port, upstreams, e.serverCPU)
		}
		if err == nil {
			defer p.stop()
			switch {
			case s.https:
				err = waitReadyTLS(ctx, e, p, port)
			case s.h2:
				err = waitReadyH2(ctx, p, port)
			default:
				err = waitReady(ctx, p, port)
			}
		}
		bar.Done(startupEstimate)
		if err != nil {
			l.Rows[i].Note = err.Error()
			bar.Logf("note: %s %s did not run: %v", area, sp.name, err)
			bar.Done(perServer - startupEstimate)
			continue
		}
		ls = append(ls, live{row: &l.Rows[i], p: p, port: port})
	}
	for _, sv := range ls {
		bar.Set(area, "warm-up "+sv.row.Server)
		_, _, _ = runClient(ctx, e, sv.port, o.warmup, o)
		bar.Done(o.warmup.Seconds())
	}
	for r := 0; r < o.rounds; r++ {
		for _, sv := range roundOrder(ls, r, s.alternate) {
			if ctx.Err() != nil {
				return l
			}
			bar.Set(area, fmt.Sprintf("%s round %d/%d", sv.row.Server, r+1, o.rounds))
			rd, err := measure(ctx, e, sv, backends, o)
			bar.Done(o.duration.Seconds() + perRunOverhead)
			if err != nil {
				if sv.row.Note == "" {
					sv.row.Note = err.Error()
				}
				bar.Logf("note: %s %s round %d: %v", area, sv.row.Server, r+1, err)
				continue
			}
			sv.row.Rounds = append(sv.row.Rounds, rd)
		}
	}
	return l
}

// roundOrder is the order of the servers in round r.
func roundOrder(ls []live, r int, alternate bool) []live {
	if !alternate || r%2 == 0 {
		return ls
	}
	rev := slices.Clone(ls)
	slices.Reverse(rev)
	return rev
}

// wrkScript writes (once) the wrk Lua script of a run: with pipeline > 0 a
// request() that sends that many requests per write (the request wrk
// would send, repeated; wrk counts each response, so requests/s stays
// comparable), and always wrkout.DoneScript, whose done() prints wrk's own
// CPU time and its latency histogram. Without a request() wrk keeps its
// static request path, so the script costs nothing during the run.
func wrkScript(dir string, pipeline int) (string, error) {
	path := filepath.Join(dir, fmt.Sprintf("wrk-pipeline%d.lua", pipeline))
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	script := "-- written by benchrun\n"
	if pipeline > 0 {
		script += fmt.Sprintf(`-- %d pipelined requests per write
init = function(args)
  local r = {}
  for i = 1, %d do r[i] = wrk.format() end
  batch = table.concat(r)
end
request = function() return batch end
`, pipeline, pipeline)
	}
	script += wrkout.DoneScript
	return path, os.WriteFile(path, []byte(script), 0o644)
}

// measure runs wrk once against a live server and reads the CPU time of
// the server, of the backends (proxies) and of the whole machine around it.
func measure(ctx context.Context, e *env, sv live, backends []*proc, o loadOpts) (report.Round, error) {
	if !sv.p.alive() {
		return report.Round{}, fmt.Errorf("server exited: %s", sv.p.out.Last())
	}
	before, err := procstat.TreeCPUTime(sv.p.pid())
	if err != nil {
		return report.Round{}, err
	}
	backBefore, err := backendCPU(backends)
	if err != nil {
		return report.Round{}, fmt.Errorf("backend: %w", err)
	}
	busyBefore, busyErr := procstat.SystemBusy()
	start := time.Now()
	w, wrkTotal, err := runClient(ctx, e, sv.port, o.duration, o)
	if err != nil {
		return report.Round{}, err
	}
	wall := time.Since(start)
	busyAfter, busyErr2 := procstat.SystemBusy()
	after, err := procstat.TreeCPUTime(sv.p.pid())
	if err != nil {
		return report.Round{}, fmt.Errorf("server exited during the run: %v", err)
	}
	backAfter, err := backendCPU(backends)
	if err != nil {
		return report.Round{}, fmt.Errorf("backend exited during the run: %v", err)
	}
	if w.Requests == 0 {
		// No sample: a zero would drag the median down and make the CPU
		// per request undefined.
		return report.Round{}, fmt.Errorf("no request completed in %s (%d socket errors)", o.duration, w.SocketErrors)
	}
	rd := report.Round{Wrk: w, CPU: after - before, WrkCPU: w.WrkCPU, BackendCPU: backAfter - backBefore}
	// The client CPU's load is taken over wrk's run; the machine's
	// over the whole command, less wrk's whole process time (its
	// histogram dump after the run included).
	rd.Wall = time.Duration(w.RunMicros) * time.Microsecond
	if rd.Wall == 0 {
		rd.Wall = w.Duration
	}
	if busyErr == nil && busyErr2 == nil && wall > 0 {
		others := max(0, busyAfter-busyBefore-rd.CPU-max(wrkTotal, rd.WrkCPU)-rd.BackendCPU)
		// As CPUs busy over the run's wall time (Others/Wall).
		rd.Others = time.Duration(float64(others) * float64(rd.Wall) / float64(wall))
	}
	return rd, nil
}

// backendCPU is the CPU time of every backend process tree.
func backendCPU(backends []*proc) (time.Duration, error) {
	var sum time.Duration
	for _, bp := range backends {
		d, err := procstat.TreeCPUTime(bp.pid())
		if err != nil {
			return 0, err
		}
		sum += d
	}
	return sum, nil
}

// startBackend starts the proxies' backend and returns its processes and
// target addresses: one target, or a pool of s.targets, served by one
// process when the backend can listen on several ports (startPool) and by
// one process per target otherwise. The processes it returns are to be
// stopped by the caller, also on error.
func (s scenario) startBackend(ctx context.Context, e *env) ([]*proc, []string, error) {
	n := max(1, s.targets)
	ports, err := freePorts(n)
	if err != nil {
		return nil, nil, err
	}
	var addrs []string
	for _, port := range ports {
		addrs = append(addrs, "127.0.0.1:"+strconv.Itoa(port))
	}
	var ps []*proc
	if n > 1 && s.backend.startPool != nil {
		p, err := s.backend.startPool(e, ports, e.clientCPU)
		if err != nil {
			return nil, nil, err
		}
		ps = append(ps, p)
		for _, port := range ports {
			if err := waitReady(ctx, p, port); err != nil {
				return ps, nil, err
			}
		}
		return ps, addrs, nil
	}
	for _, port := range ports {
		p, err := s.backend.start(e, port, nil, e.clientCPU)
		if err != nil {
			return ps, nil, err
		}
		ps = append(ps, p)
		if err := waitReady(ctx, p, port); err != nil {
			return ps, nil, err
		}
	}
	return ps, addrs, nil
}

// runClient runs the scenario's client for d: wrk, or hsload for the
// handshake rate.
func runClient(ctx context.Context, e *env, port int, d time.Duration, o loadOpts) (wrkout.Result, time.Duration, error) {
	if o.h2 {
		return runH2load(ctx, e, port, d)
	}
	if o.handshake {
		return runHandshakes(ctx, e, port, d, o.conns)
	}
	scheme := "http"
	if o.https {
		scheme = "https"
	}
	return runWrk(ctx, e, scheme, port, d, o)
}

// runWrk runs wrk with benchrun's script. Its percentiles come from the
// dumped histogram with wrk's coordinated-omission correction undone
// (wrkout.Result.UseHistogram): the recorded latencies, per request or,
// pipelined, per batch. wrk's CPU time is its own figure from the script,
// else its rusage at exit.
func runWrk(ctx context.Context, e *env, scheme string, port int, d time.Duration, o loadOpts) (wrkout.Result, time.Duration, error) {
	conns, pipeline := o.conns, o.pipeline
	ctx, cancel := context.WithTimeout(ctx, d+wrkSlack)
	defer cancel()
	secs := max(1, int(d.Round(time.Second).Seconds()))
	script, err := wrkScript(e.tmp, pipeline)
	if err != nil {
		return wrkout.Result{}, 0, err
	}
	args := []string{e.wrk, "-t1", "-c" + strconv.Itoa(conns), "-d" + strconv.Itoa(secs) + "s", "--latency", "-s", script}
	for _, h := range o.headers {
		args = append(args, "-H", h)
	}
	path := o.path
	if path == "" {
		path = "/"
	}
	argv := e.pinned(e.clientCPU, append(args, scheme+"://127.0.0.1:"+strconv.Itoa(port)+path)...)
	out, usage, err := runCmdUsage(ctx, e.tmp, argv...)
	if err != nil {
		return wrkout.Result{}, 0, fmt.Errorf("wrk: %v: %s", err, lastLine(out))
	}
	w, err := wrkResult(out, usage, conns)
	return w, usage, err
}

// wrkResult reads a run's output: wrk's summary, its CPU time (the
// script's figure, else usage) and the percentiles of the recorded
// latencies from the histogram dump. On a dump that does not fit wrk's
// correction interval, or without one, wrk's printed percentiles stay,
// less the zeros it prints for the ones it lost.
func wrkResult(out []byte, usage time.Duration, conns int) (wrkout.Result, error) {
	w, err := wrkout.Parse(string(out))
	if err != nil {
		return w, err
	}
	if w.WrkCPU == 0 {
		w.WrkCPU = usage
	}
	_, _ = w.UseHistogram(conns, report.Percentiles)
	return w, nil
}
