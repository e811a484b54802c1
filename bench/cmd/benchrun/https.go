package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/simdedge/simdedge/bench/internal/report"
	"github.com/simdedge/simdedge/bench/internal/wrkout"
)

// The https area (issue 20's Speed section): the origin's response over
// TLS 1.3 with one ECDSA P-256 certificate (genTLSFiles) from simdedge on
// the loop engine, simdedge on the goroutine engine and nginx, in two
// scenarios:
//
//   - https: keep-alive, wrk -t1 -c64 over https, CPU per request;
//   - https-handshake: a new connection per request with full handshakes
//     (hsload: no session cache), handshakes/s and CPU per handshake.
//
// Targets: simdedge-loop's keep-alive CPU per request at or below nginx's,
// its handshakes/s at least 0.8x nginx's, and the loop's CPU per request
// below the goroutine engine's.

// Row names of the https area.
const (
	httpsLoop      = "simdedge-loop"
	httpsGoroutine = "simdedge-goroutine"
	httpsNginx     = "nginx"
	// httpsLoopOff is the loop engine with SIMDEDGE_LOOP_TLS=off: TLS
	// connections handed to goroutines after accept (the other design
	// of issue 20), a row only with -https-loop-tls-off.
	httpsLoopOff = "simdedge-loop-tlsoff"
)

// loopTLSOff is the environment that selects the goroutine design of TLS
// on the loop engine.
const loopTLSOff = "SIMDEDGE_LOOP_TLS=off"

// httpsRow is one simdedge row: its engine and extra environment.
type httpsRow struct {
	name, engine string
	env          []string
	bench        string
}

// httpsRows are the simdedge rows of both scenarios; withOff adds the
// loop engine with its TLS handed to goroutines.
func httpsRows(withOff bool) []httpsRow {
	rows := []httpsRow{
		{name: httpsLoop, engine: "loop", bench: "server=simdedge/engine=loop"},
		{name: httpsGoroutine, engine: "goroutine", bench: "server=simdedge/engine=goroutine"},
	}
	if withOff {
		rows = append(rows, httpsRow{name: httpsLoopOff, engine: "loop", env: []string{loopTLSOff}, bench: "server=simdedge/engine=loop-tlsoff"})
	}
	return rows
}

// httpsNginxBench names nginx's benchmark lines beside simdedge's.
const httpsNginxBench = "server=nginx/engine=nginx"

// httpsPairs are the per-round ratios: the targets' ratios first.
func httpsPairs(withOff bool) []report.Pair {
	p := []report.Pair{
		{Num: httpsLoop, Den: httpsNginx},
		{Num: httpsLoop, Den: httpsGoroutine},
		{Num: httpsGoroutine, Den: httpsNginx},
	}
	if withOff {
		p = append(p, report.Pair{Num: httpsLoop, Den: httpsLoopOff})
	}
	return p
}

// httpsScenarios are the keep-alive and handshake scenarios.
func httpsScenarios(withOff bool) []scenario {
	var servers []serverSpec
	bench := map[string]string{httpsNginx: httpsNginxBench}
	for _, r := range httpsRows(withOff) {
		servers = append(servers, simdedgeTLSServer(r))
		bench[r.name] = r.bench
	}
	servers = append(servers, nginxTLSServer())
	common := "TLS 1.3 only, one ECDSA P-256 certificate (chain: leaf and CA) generated for the run, the origin's response. nginx: `ssl_session_cache shared:SSL:10m`, one worker. "
	return []scenario{
		{kind: "https", peer: httpsNginx, servers: servers, https: true, pairs: httpsPairs(withOff), bench: bench, alternate: true,
			note: common + "Keep-alive: wrk over https, one handshake per connection, so CPU per request is record encryption and HTTP."},
		{kind: "https-handshake", peer: httpsNginx, servers: servers, https: true, handshake: true, pairs: httpsPairs(withOff), bench: bench, alternate: true,
			note: common + "Handshake rate: instead of wrk, hsload (cmd/hsload) opens a new connection per request with no session cache (every handshake is full, X25519 key exchange, no resumption), sends one GET with `Connection: close`, reads the response, closes; requests/s is handshakes/s and CPU per request is server CPU per handshake. " +
				"The client CPU column is hsload's (Go crypto/tls, chain not verified): near 100 % the client set the rate, and CPU per handshake is the comparison."},
	}
}

// simdedgeTLSServer runs simdedge serving the origin response on a TLS
// listener with the run's certificate.
func simdedgeTLSServer(r httpsRow) serverSpec {
	return serverSpec{name: r.name, start: func(e *env, port int, upstreams []string, cpu string) (*proc, error) {
		if e.tls == nil {
			return nil, errNoTLSFiles
		}
		conf, err := simdedgeConfigTLS(port, upstreams, r.engine, nil, e.tls)
		if err != nil {
			return nil, err
		}
		return startSimdedge(e, conf, cpu, r.env)
	}}
}

// nginxTLSServer runs nginx serving the origin response over TLS.
func nginxTLSServer() serverSpec {
	return serverSpec{name: httpsNginx, start: func(e *env, port int, upstreams []string, cpu string) (*proc, error) {
		if e.tls == nil {
			return nil, errNoTLSFiles
		}
		return startNginxTLS(e, []int{port}, upstreams, cpu, e.tls)
	}}
}

var (
	errNoTLSFiles  = errors.New("no certificate was generated for the run")
	errNoHsload    = errors.New("hsload did not build")
	errNoHandshake = errors.New("hsload: no \"handshakes\" line")
)

// prepareHTTPS generates the run's certificate and builds hsload.
func prepareHTTPS(ctx context.Context, e *env) error {
	dir := filepath.Join(e.tmp, "tls")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := genTLSFiles(dir, time.Now())
	if err != nil {
		return fmt.Errorf("generating the certificate: %w", err)
	}
	e.tls = &f
	bin := filepath.Join(e.tmp, "hsload")
	if out, err := runCmd(ctx, e.bench, "go", "build", "-o", bin, "./cmd/hsload"); err != nil {
		return fmt.Errorf("building hsload failed (%v): %s; the handshake rows are empty", err, lastLine(out))
	}
	e.hsloadBin = bin
	return nil
}

// waitReadyTLS is waitReady over https, trusting the run's CA.
func waitReadyTLS(ctx context.Context, e *env, p *proc, port int) error {
	if e.tls == nil {
		return errNoTLSFiles
	}
	ca, err := os.ReadFile(e.tls.CA)
	if err != nil {
		return err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS13}}
	defer tr.CloseIdleConnections()
	return waitReadyURL(ctx, p, "https://127.0.0.1:"+strconv.Itoa(port)+"/", &http.Client{Timeout: time.Second, Transport: tr})
}

// runHandshakes runs hsload against port for d with conns connections at
// once, pinned to the client CPU, and returns its figures in wrk's shape
// (requests are handshakes; WrkCPU is hsload's CPU time).
func runHandshakes(ctx context.Context, e *env, port int, d time.Duration, conns int) (wrkout.Result, time.Duration, error) {
	if e.hsloadBin == "" {
		return wrkout.Result{}, 0, errNoHsload
	}
	ctx, cancel := context.WithTimeout(ctx, d+wrkSlack)
	defer cancel()
	argv := e.pinned(e.clientCPU, e.hsloadBin, "-addr", "127.0.0.1:"+strconv.Itoa(port), "-conns", strconv.Itoa(conns), "-d", d.String(), "-servername", leafDNS)
	out, usage, err := runCmdUsage(ctx, e.tmp, argv...)
	if err != nil {
		return wrkout.Result{}, 0, fmt.Errorf("hsload: %v: %s", err, lastLine(out))
	}
	w, err := parseHandshakes(out)
	w.WrkCPU = usage
	return w, usage, err
}

// parseHandshakes reads hsload's output (cmd/hsload's package comment)
// into a wrkout.Result: Requests are completed handshakes, SocketErrors
// failed connections.
func parseHandshakes(out []byte) (wrkout.Result, error) {
	w := wrkout.Result{Latency: map[float64]time.Duration{}}
	seen := false
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), " ")
		if !ok {
			continue
		}
		switch {
		case k == "handshakes":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 {
				return w, fmt.Errorf("hsload: bad handshakes line %q", v)
			}
			w.Requests, w.RunRequests, seen = n, n, true
		case k == "errors":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 {
				return w, fmt.Errorf("hsload: bad errors line %q", v)
			}
			w.SocketErrors = n
		case k == "seconds":
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || f <= 0 {
				return w, fmt.Errorf("hsload: bad seconds line %q", v)
			}
			w.Duration = time.Duration(f * float64(time.Second))
			w.RunMicros = w.Duration.Microseconds()
		case strings.HasPrefix(k, "p") && strings.HasSuffix(k, "-ns"):
			p, err1 := strconv.ParseFloat(strings.TrimSuffix(k[1:], "-ns"), 64)
			ns, err2 := strconv.ParseInt(v, 10, 64)
			if err1 != nil || err2 != nil || ns < 0 {
				return w, fmt.Errorf("hsload: bad percentile line %q", k)
			}
			w.Latency[p] = time.Duration(ns)
		}
	}
	if !seen {
		return w, errNoHandshake
	}
	if w.Duration > 0 {
		w.RPS = float64(w.Requests) / w.Duration.Seconds()
	}
	return w, nil
}
