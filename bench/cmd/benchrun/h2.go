package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/simdedge/simdedge/bench/internal/report"
	"github.com/simdedge/simdedge/bench/internal/wrkout"
)

// The h2 area (issue 21's Speed section): HTTP/2 with prior knowledge
// (h2c) from h2load, 100 streams at once on a few connections, against
// simdedge on both engines and nginx, in two scenarios:
//
//   - h2-origin: the origin's response (respond route; nginx `return`);
//   - h2-proxy: each proxies to an nginx HTTP/1.1 origin (keep-alive).
//
// Targets: simdedge's server CPU per request at or below nginx's, as origin
// and as proxy. On the loop engine an HTTP/2 connection is handed to the
// goroutine path when its preface arrives, so both simdedge rows run the
// same HTTP/2 code; the rows show what the engine costs around it.

// Row names of the h2 area.
const (
	h2Loop      = "simdedge-loop"
	h2Goroutine = "simdedge-goroutine"
	h2Nginx     = "nginx"
)

// h2load's shape: h2Conns connections with h2Streams streams each (-c, -m),
// 100 requests in flight as in the issue.
const (
	h2Conns   = 4
	h2Streams = 25
)

// h2Scenarios are the origin and proxy scenarios; backend serves the
// proxies.
func h2Scenarios(backend serverSpec) []scenario {
	servers := func() []serverSpec {
		return []serverSpec{simdedgeH2Server(h2Loop, "loop"), simdedgeH2Server(h2Goroutine, "goroutine"), nginxH2Server()}
	}
	pairs := []report.Pair{{Num: h2Loop, Den: h2Nginx}, {Num: h2Goroutine, Den: h2Nginx}, {Num: h2Loop, Den: h2Goroutine}}
	bench := map[string]string{h2Loop: "server=simdedge/engine=loop", h2Goroutine: "server=simdedge/engine=goroutine", h2Nginx: "server=nginx/engine=nginx"}
	// The origin scenario also runs H2O (h2c with prior knowledge on its
	// plain listener); it proxies nothing here.
	origin := append(servers(), h2oServer())
	originPairs := append(slices.Clone(pairs), report.Pair{Num: h2Loop, Den: h2oName}, report.Pair{Num: h2Goroutine, Den: h2oName})
	originBench := maps.Clone(bench)
	originBench[h2oName] = "server=h2o/engine=h2o"
	note := fmt.Sprintf("HTTP/2 with prior knowledge (h2c) from h2load -c%d -m%d (%d streams in flight). simdedge: a listener with `h2c: true`; nginx 1.22: `listen ... http2`, one worker.", h2Conns, h2Streams, h2Conns*h2Streams)
	return []scenario{
		{kind: "h2-origin", peer: h2Nginx, servers: origin, h2: true, pairs: originPairs, bench: originBench, alternate: true,
			note: note + " H2O 2.2.5: one thread, its file handler."},
		{kind: "h2-proxy", peer: h2Nginx, backend: &backend, servers: servers(), h2: true, pairs: pairs, bench: bench, alternate: true,
			note: note + " Both proxy over HTTP/1.1 keep-alive to the backend."},
	}
}

// simdedgeH2Server runs simdedge on engine with an h2c listener.
func simdedgeH2Server(name, engine string) serverSpec {
	return serverSpec{name: name, start: func(e *env, port int, upstreams []string, cpu string) (*proc, error) {
		conf, err := simdedgeConfigWith(port, upstreams, engine, nil, nil, true)
		if err != nil {
			return nil, err
		}
		return startSimdedge(e, conf, cpu, nil)
	}}
}

// nginxH2Server runs nginx with `listen ... http2` (h2c only).
func nginxH2Server() serverSpec {
	return serverSpec{name: h2Nginx, start: func(e *env, port int, upstreams []string, cpu string) (*proc, error) {
		return startNginxWith(e, []int{port}, upstreams, cpu, nil, true)
	}}
}

// waitReadyH2 is waitReady over h2c with prior knowledge (nginx's http2
// listener speaks nothing else).
func waitReadyH2(ctx context.Context, p *proc, port int) error {
	var protos http.Protocols
	protos.SetUnencryptedHTTP2(true)
	tr := &http.Transport{Protocols: &protos}
	defer tr.CloseIdleConnections()
	return waitReadyURL(ctx, p, "http://127.0.0.1:"+strconv.Itoa(port)+"/", &http.Client{Timeout: time.Second, Transport: tr})
}

var (
	errNoH2load      = errors.New("h2load is not installed (apt-get install nghttp2-client)")
	errNoH2loadTotal = errors.New("h2load: no \"requests:\" line")
)

// runH2load runs h2load against port for d, pinned to the client CPU, and
// returns its figures in wrk's shape (WrkCPU is h2load's CPU time).
func runH2load(ctx context.Context, e *env, port int, d time.Duration) (wrkout.Result, time.Duration, error) {
	if e.h2load == "" {
		return wrkout.Result{}, 0, errNoH2load
	}
	ctx, cancel := context.WithTimeout(ctx, d+wrkSlack)
	defer cancel()
	secs := max(1, int(d.Round(time.Second).Seconds()))
	argv := e.pinned(e.clientCPU, e.h2load, "-c", strconv.Itoa(h2Conns), "-m", strconv.Itoa(h2Streams), "-D", strconv.Itoa(secs),
		"http://127.0.0.1:"+strconv.Itoa(port)+"/")
	out, usage, err := runCmdUsage(ctx, e.tmp, argv...)
	if err != nil {
		return wrkout.Result{}, 0, fmt.Errorf("h2load: %v: %s", err, lastLine(out))
	}
	w, err := parseH2load(out)
	w.WrkCPU = usage
	return w, usage, err
}

// parseH2load reads h2load's summary:
//
//	finished in 5.00s, 10899.80 req/s, 362.07KB/s
//	requests: 54499 total, 54599 started, 54499 done, 54499 succeeded, 0 failed, 0 errored, 0 timeout
//	time for request:       42us    523.69ms     20.58ms     61.91ms    93.83%
//
// Requests are the succeeded ones; failed, errored and timed-out ones are
// SocketErrors; the mean time for a request stands as the 50th percentile
// (h2load prints no percentiles).
func parseH2load(out []byte) (wrkout.Result, error) {
	w := wrkout.Result{Latency: map[float64]time.Duration{}}
	seen := false
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, "finished in "):
			f := strings.Fields(strings.TrimPrefix(line, "finished in "))
			if len(f) >= 2 {
				if d, err := time.ParseDuration(strings.TrimSuffix(f[0], ",")); err == nil {
					w.Duration = d
					w.RunMicros = d.Microseconds()
				}
				w.RPS, _ = strconv.ParseFloat(f[1], 64)
			}
		case strings.HasPrefix(line, "requests: "):
			for _, part := range strings.Split(strings.TrimPrefix(line, "requests: "), ",") {
				f := strings.Fields(part)
				if len(f) != 2 {
					continue
				}
				n, err := strconv.ParseInt(f[0], 10, 64)
				if err != nil || n < 0 {
					return w, fmt.Errorf("h2load: bad requests line %q", line)
				}
				switch f[1] {
				case "succeeded":
					w.Requests, w.RunRequests, seen = n, n, true
				case "failed", "errored", "timeout":
					w.SocketErrors += n
				}
			}
		case strings.HasPrefix(line, "time for request:"):
			f := strings.Fields(strings.TrimPrefix(line, "time for request:"))
			if len(f) >= 3 {
				if d, err := time.ParseDuration(f[2]); err == nil {
					w.Latency[50] = d
				}
			}
		}
	}
	if !seen {
		return w, errNoH2loadTotal
	}
	return w, nil
}
