// Command attack repeats the measurements of issue 18 against a simdedge
// binary and prints a Markdown table: the server's memory under a flood of
// requests that announce a body and never send it, a new client's latency
// while one address holds every connection slot, a slow upload through the
// proxy, bodies trickled a byte at a time, and slowloris headers. It also
// repeats issue 27's: how HTTP/2 requests map onto the HTTP/1.1 ones a
// backend receives (h2map), floods of empty HTTP/2 frames (h2flood), and
// paths that a deny rule misses and a normalising backend resolves into the
// denied prefix (normalise).
//
//	go run ./cmd/attack -bin /path/to/simdedge [-quick] [-scenarios flood,idle] [-out FILE]
//
// `make attack` builds the binary into a temporary directory and runs this
// (BIN=PATH to use another binary, QUICK=1, SCENARIOS=..., OUT=FILE).
//
// Every scenario starts its own simdedge processes (by PID, on loopback
// ports, with configuration files of its own in a temporary directory) and
// its own in-process backends, is bounded in time and in connections, and
// stops exactly what it started. The scenarios observe outcomes (what the
// backend received, when the server closed, its CPU), not verdicts, so
// that one suite measures the builds before and after a fix. The suite
// takes about 4 minutes (-quick: about 2).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"
)

var errUsage = errors.New("attack: -bin PATH is required (make attack builds one)")

// scenario is one row family of the table.
type scenario struct {
	name string
	// variants are the server setups it runs on.
	variants []variant
	// parallel runs the variants side by side: for scenarios that wait on
	// slow clients (rate-limited, trickled) rather than measure the
	// machine, this divides the suite's time by the number of variants.
	parallel bool
	run      func(ctx context.Context, o *options, v variant) row
}

func main() {
	os.Exit(mainErr())
}

func mainErr() int {
	o := &options{}
	flag.StringVar(&o.bin, "bin", "", "the simdedge binary to attack")
	flag.BoolVar(&o.quick, "quick", false, "smaller and shorter scenarios (a 2 MB upload, shorter bounds)")
	scen := flag.String("scenarios", strings.Join(scenarioNames, ","), "scenarios to run, comma-separated")
	engines := flag.String("engines", "loop,goroutine", "engines to run on, comma-separated")
	flag.IntVar(&o.maxConns, "max-conns", defaultMaxConns, "limits.max_conns of every server (the idle flood fills it)")
	flag.StringVar(&o.limitsYAML, "limits", "", `extra "key: value" lines for limits, separated by ";" (e.g. "max_conns_per_ip: 100"), for builds that have the keys`)
	flag.StringVar(&o.timeoutsYAML, "timeouts", "", `extra "key: value" lines for timeouts, separated by ";"`)
	out := flag.String("out", "", "also write the report to this file")
	flag.StringVar(&o.note, "note", "", "a line for the report's header (what else used the machine, say)")
	flag.Parse()
	if o.bin == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, errUsage)
		flag.Usage()
		return 2
	}
	// Resolved once: a name on PATH or a relative path, checked before
	// any scenario starts.
	bin, err := exec.LookPath(o.bin)
	if err != nil {
		fmt.Fprintf(os.Stderr, "attack: -bin: %v\n", err)
		return 2
	}
	if o.bin, err = filepath.Abs(bin); err != nil {
		fmt.Fprintf(os.Stderr, "attack: -bin: %v\n", err)
		return 2
	}
	o.engines = strings.Split(*engines, ",")
	for _, e := range o.engines {
		if !validEngine(e) {
			fmt.Fprintf(os.Stderr, "attack: unknown engine %q (loop, goroutine)\n", e)
			return 2
		}
	}
	var chosen []scenario
	for _, name := range strings.Split(*scen, ",") {
		s, ok := scenarioByName(o, name)
		if !ok {
			fmt.Fprintf(os.Stderr, "attack: unknown scenario %q (%s)\n", name, strings.Join(scenarioNames, ", "))
			return 2
		}
		chosen = append(chosen, s)
	}
	dir, err := os.MkdirTemp("", "simdedge-attack-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	o.dir = dir

	// SIGINT stops the suite; every scenario closes its clients and stops
	// its servers on the way out.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	start, load0 := time.Now(), loadAverage()
	var rows []row
	for _, s := range chosen {
		fmt.Fprintf(os.Stderr, "attack: %s on %d setups...\n", s.name, len(s.variants))
		rows = append(rows, runScenario(ctx, o, s)...)
		if ctx.Err() != nil {
			break
		}
	}
	report := header(o, time.Since(start), load0, loadAverage()) + formatTable(rows) + notes(o, chosen)
	fmt.Print(report)
	if *out != "" {
		if err := os.WriteFile(*out, []byte(report), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	if ctx.Err() != nil {
		return 1
	}
	return 0
}

func runScenario(ctx context.Context, o *options, s scenario) []row {
	rows := make([]row, len(s.variants))
	// run marks a row cut short by an interrupt: its bounds did not pass.
	run := func(v variant) row {
		r := s.run(ctx, o, v)
		if ctx.Err() != nil {
			r.result += " (interrupted)"
		}
		return r
	}
	if !s.parallel {
		for i, v := range s.variants {
			if ctx.Err() != nil {
				return rows[:i]
			}
			rows[i] = run(v)
		}
		return rows
	}
	done := make(chan struct{}, len(s.variants))
	for i, v := range s.variants {
		go func() {
			rows[i] = run(v)
			done <- struct{}{}
		}()
	}
	for range s.variants {
		<-done
	}
	return rows
}

// header names the binary, the machine and the settings the figures
// depend on.
func header(o *options, took time.Duration, load0, load1 string) string {
	ver := "unknown"
	if b, err := exec.Command(o.bin, "version").Output(); err == nil {
		ver = strings.TrimSpace(string(b))
	}
	host, _ := os.Hostname()
	mode := "full"
	if o.quick {
		mode = "quick"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# simdedge attack suite\n\n")
	fmt.Fprintf(&b, "- binary: `%s` (%s)\n", o.bin, ver)
	fmt.Fprintf(&b, "- run: %s, %s mode, %d CPUs, host %s, took %s\n", time.Now().UTC().Format(time.RFC3339), mode, runtime.NumCPU(), host, took.Round(time.Second))
	// The machine may be shared: its load says how much of it the
	// servers and the attackers had.
	fmt.Fprintf(&b, "- load average (1 min): %s at the start, %s at the end\n", load0, load1)
	if o.note != "" {
		fmt.Fprintf(&b, "- note: %s\n", o.note)
	}
	fmt.Fprintf(&b, "- every server: limits.max_conns %d, timeouts.drain %s", o.maxConns, fmtSeconds(drainTimeout))
	if o.limitsYAML != "" {
		fmt.Fprintf(&b, ", limits `%s`", o.limitsYAML)
	}
	if o.timeoutsYAML != "" {
		fmt.Fprintf(&b, ", timeouts `%s`", o.timeoutsYAML)
	}
	b.WriteString("; everything else at its default\n\n")
	return b.String()
}

// loadAverage is the 1-minute load average from /proc/loadavg, "?" if
// unreadable.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) > 0 {
		return f[0]
	}
	return "?"
}

func notes(o *options, chosen []scenario) string {
	var b strings.Builder
	b.WriteString("\nScenarios:\n")
	for _, s := range chosen {
		fmt.Fprintf(&b, "- %s: %s\n", s.name, scenarioDoc(o, s.name))
	}
	return b.String()
}

var scenarioNames = []string{"flood", "idle", "upload", "trickle", "slowloris", "h2map", "h2flood", "normalise"}

func scenarioByName(o *options, name string) (scenario, bool) {
	origin := originVariants(o.engines)
	proxy := proxyVariants(o.engines)
	switch name {
	case "flood":
		return scenario{name: name, variants: origin, run: runFlood}, true
	case "idle":
		return scenario{name: name, variants: origin, run: runIdle}, true
	case "upload":
		return scenario{name: name, variants: proxy, parallel: true, run: runUpload}, true
	case "trickle":
		// /echo on each engine, and the proxy route on each proxy path.
		var vs []variant
		for _, v := range origin {
			v.path = echoPath
			vs = append(vs, v)
		}
		for _, v := range proxy {
			v.path = proxyPath
			vs = append(vs, v)
		}
		return scenario{name: name, variants: vs, parallel: true, run: runTrickle}, true
	case "slowloris":
		return scenario{name: name, variants: origin, parallel: true, run: runSlowloris}, true
	case "h2map":
		return scenario{name: name, variants: withKinds(proxy, protoH2C, protoH2), run: runH2Map}, true
	case "h2flood":
		return scenario{name: name, variants: withKinds(origin, floodKinds...), run: runH2Flood}, true
	case "normalise":
		return scenario{name: name, variants: withKinds(proxy, protoH1, protoH2C), run: runNormalise}, true
	}
	return scenario{}, false
}

func scenarioDoc(o *options, name string) string {
	p := paramsFor(o)
	switch name {
	case "flood":
		return fmt.Sprintf("%d waves of %d connections, each sending only `POST /echo` with `Content-Length: %d` and holding %s; peak RSS is VmHWM (and the highest VmRSS sampled every %s), \"after\" is VmRSS %s after the last wave closed, CPU %% is the server's CPU time over the whole flood",
			floodWaves, floodConns, floodContentLength, fmtSeconds(p.floodHold), fmtMillis(rssSample), fmtSeconds(p.floodSettle))
	case "idle":
		return fmt.Sprintf("127.0.0.1 opens up to limits.max_conns (%d) keep-alive connections, one GET /echo each, and leaves them idle; then a client on 127.0.0.2 sends GET /echo: the time to its status line, waited for %s at most", o.maxConns, fmtSeconds(idleBound))
	case "upload":
		return fmt.Sprintf("a %d-byte body sent at %d B/s through the proxy (route /up/) to an in-process backend that reads it all and answers 200; the upstream's response_header timeout is at its default", p.uploadSize, uploadRate)
	case "trickle":
		return fmt.Sprintf("%d clients each announce a %d-byte body and send 1 byte every %s, to /echo or through the proxy; the time until the server answers or closes, or \"still open\" at %s; backend connections are the peak count of ESTABLISHED sockets on the backend's port", trickleClients, trickleContentLength, fmtSeconds(trickleEvery), fmtSeconds(p.trickleBound))
	case "slowloris":
		return fmt.Sprintf("%d clients send a request head 1 byte every %s and never end it: the time until the server answers or closes, or \"still open\" at %s", slowClients, fmtSeconds(slowEvery), fmtSeconds(p.slowBound))
	case "h2map":
		return fmt.Sprintf("HTTP/2 requests (h2c, or h2 over TLS), one connection each, proxied to an in-process HTTP/1.1 backend that records each request head as received; a `match.host: %s` route denies every client. %d cases: `host: %s` beside `:authority: %s`; `:method: GET /admin/x` with `:path: /pub`; `:path` with SP, HTAB, `#`, a byte 0xE9; `GET *`; `:authority` with userinfo, `/`, `?`, `#`, `\\`, SP. Malformed at the backend: a request line that is not `token SP origin-form SP HTTP/1.x` (or `*` for another method than OPTIONS), not one Host, a Host that is not a host[:port], or one that differs from a valid :authority; refused: the backend got nothing, and the client saw an error status, RST_STREAM or GOAWAY (code), or the connection closed; answered by the edge: the backend got nothing and the edge answered with a status below 400; the control (a plain GET /pub, which should reach the backend) is noted, not counted, and the result begins \"control failed\" if it did not",
			adminHost, len(h2mapCases)-1, adminHost, publicHost)
	case "h2flood":
		return fmt.Sprintf("one h2c connection to an origin writes, in batches of %d, as fast as it can for at most %s: empty CONTINUATION frames after a HEADERS without END_HEADERS; empty DATA frames on an open POST %s stream; WINDOW_UPDATE +1 on stream 0. Frames sent before the server closed (or \"still open\"), the time to the close, the GOAWAY code, and the server's CPU time (utime+stime of /proc/PID/stat) over the flood; the attacker shares the machine's CPUs with the server",
			floodBatch, fmtSeconds(p.h2floodBound), echoPath)
	case "normalise":
		return "a route on `/admin/` denies every client, a route `path_regex: ^/static/(.*)$` rewrites to `/assets/{1}`, the rest is proxied; each path over HTTP/1.1 or h2c, one connection each, to an in-process backend that records the request line. Into /admin/: the target the backend got, its percent-encoded unreserved characters decoded and `path.Clean`ed (as a normalising backend such as nginx resolves it), is in /admin/; routed elsewhere: the backend got a path outside it; refused: the backend got nothing and the client saw an error status, a reset or a close; answered by the edge: nothing reached the backend and the status was below 400. `/admin/x` (to be refused) and `/pub/x` (to be forwarded) are controls, noted and not counted; the result begins \"control failed\" if one ended otherwise"
	}
	return ""
}

// engineNames are the kernel TCP engines a server can run.
var engineNames = []string{engineLoop, engineGoroutine}

func validEngine(e string) bool { return slices.Contains(engineNames, e) }
