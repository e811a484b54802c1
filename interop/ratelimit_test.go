package interop

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/simdedge/simdedge/internal/testproc"
)

// Global rate limits (issue 32) against the reference rate-limit service,
// github.com/envoyproxy/ratelimit (its service_cmd, which `make deps`
// installs from the module proxy), backed by Redis (Debian redis-server),
// both started by the test on loopback. Three simdedge processes built with
// -tags fleet, one per engine and proxy path, share one limit.

// ratelimitPkg is what make deps installs (go install; the binary is
// service_cmd in GOPATH/bin).
const ratelimitBin = "service_cmd"

// needRateLimitTools returns the paths of redis-server and the reference
// service, skipping (failing under REQUIRE_RATELIMIT=1) when one is missing.
func needRateLimitTools(t *testing.T) (redis, service string) {
	t.Helper()
	missing := func(what string) {
		msg := what + " is not installed (make deps installs it)"
		if os.Getenv("REQUIRE_RATELIMIT") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	redis, err := exec.LookPath("redis-server")
	if err != nil {
		missing("redis-server")
	}
	service, err = exec.LookPath(ratelimitBin)
	if err != nil {
		gopath, _ := exec.Command("go", "env", "GOPATH").Output()
		service = filepath.Join(string(trimNL(gopath)), "bin", ratelimitBin)
		if _, err := os.Stat(service); err != nil {
			missing("the reference rate-limit service (" + ratelimitBin + ")")
		}
	}
	return redis, service
}

func trimNL(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

// fleetBin is simdedge built with -tags fleet, once.
var fleetBin struct {
	once sync.Once
	path string
	err  string
}

func needFleetBinary(t *testing.T) string {
	t.Helper()
	fleetBin.once.Do(func() {
		bin := filepath.Join(binDir, "simdedge-fleet")
		cmd := exec.Command("go", "build", "-tags", "fleet", "-o", bin, "./cmd/simdedge")
		cmd.Dir = ".."
		if out, err := cmd.CombinedOutput(); err != nil {
			fleetBin.err = fmt.Sprintf("building simdedge -tags fleet: %v\n%s", err, out)
			return
		}
		fleetBin.path = bin
	})
	if fleetBin.path == "" {
		t.Fatal(fleetBin.err)
	}
	return fleetBin.path
}

// startProcess runs a helper process and stops it (by its PID) at cleanup.
func startProcess(t *testing.T, name string, env []string, args ...string) (stop func()) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), env...)
	var out testproc.Output
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(stopWait):
			cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("%s output:\n%s", filepath.Base(name), out.String())
		}
	}
	t.Cleanup(stop)
	return stop
}

// limitPerMinute is the shared limit of the test's service configuration.
const limitPerMinute = 20

// startRateLimitService starts Redis and the reference service and
// returns the service's gRPC address and a stop for the service alone.
func startRateLimitService(t *testing.T) (grpcAddr string, stop func()) {
	redis, service := needRateLimitTools(t)
	redisPort := freePort(t)
	startProcess(t, redis, nil, "--port", strconv.Itoa(redisPort), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
	waitListening(t, fmt.Sprintf("127.0.0.1:%d", redisPort))
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "ratelimit", "config"), 0o755); err != nil {
		t.Fatal(err)
	}
	conf := fmt.Sprintf("domain: edge\ndescriptors:\n  - key: remote_address\n    rate_limit: {unit: minute, requests_per_unit: %d}\n", limitPerMinute)
	if err := os.WriteFile(filepath.Join(root, "ratelimit", "config", "edge.yaml"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	grpcPort := freePort(t)
	grpcAddr = fmt.Sprintf("127.0.0.1:%d", grpcPort)
	stop = startProcess(t, service, []string{
		"USE_STATSD=false", "LOG_LEVEL=warn", "BACKEND_TYPE=redis",
		"REDIS_SOCKET_TYPE=tcp", fmt.Sprintf("REDIS_URL=127.0.0.1:%d", redisPort),
		"RUNTIME_ROOT=" + root, "RUNTIME_SUBDIRECTORY=ratelimit", "RUNTIME_WATCH_ROOT=false", "RUNTIME_IGNOREDOTFILES=true",
		"HOST=127.0.0.1", "GRPC_HOST=127.0.0.1", "DEBUG_HOST=127.0.0.1",
		fmt.Sprintf("PORT=%d", freePort(t)), fmt.Sprintf("GRPC_PORT=%d", grpcPort), fmt.Sprintf("DEBUG_PORT=%d", freePort(t)),
	})
	waitListening(t, grpcAddr)
	return grpcAddr, stop
}

// startBlackhole accepts connections and never answers: a service that
// does not respond, for the timeout.
func startBlackhole(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return ln.Addr().String()
}

// blackholeTimeout is the /slow route's service timeout.
const blackholeTimeout = 300 * time.Millisecond

func TestGlobalRateLimitReference(t *testing.T) {
	grpcAddr, stopService := startRateLimitService(t)
	bin := needFleetBinary(t)
	hole := startBlackhole(t)
	backend := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	startNamedBackend(t, backend, "origin")

	type instance struct {
		addr string
		c    *http.Client
	}
	var fleet []instance
	for i, e := range []struct{ engine, loopProxy string }{{"goroutine", "false"}, {"loop", "false"}, {"loop", "true"}} {
		addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
		svc := func(address, mode, timeout, key string) string {
			return fmt.Sprintf("{service: {address: %q, domain: edge, failure_mode: %s, timeout: %s, descriptors: [{entries: [{key: %s, value: \"{client_ip}\"}]}]}}",
				address, mode, timeout, key)
		}
		conf := fmt.Sprintf(`listeners: [{address: %q, h2c: true}]
engine: %s
proxy_on_loop: %s
upstreams: [{name: origin, targets: [%q]}]
routes:
  - match: {path_prefix: /allow}
    rate_limit: %s
    proxy: {upstream: origin}
  - match: {path_prefix: /deny}
    rate_limit: %s
    proxy: {upstream: origin}
  - match: {path_prefix: /slow}
    rate_limit: %s
    proxy: {upstream: origin}
  - rate_limit: %s
    proxy: {upstream: origin}
`, addr, e.engine, e.loopProxy, backend,
			svc(grpcAddr, "allow", "2s", "unlimited"), svc(grpcAddr, "deny", "2s", "unlimited"),
			svc(hole, "deny", blackholeTimeout.String(), "remote_address"), svc(grpcAddr, "deny", "2s", "remote_address"))
		startSimdedgeBin(t, bin, conf, addr)
		tr := &http.Transport{}
		if i == 2 {
			// The third instance is asked over h2c (HTTP/2 streams run
			// the same gate).
			tr.Protocols = new(http.Protocols)
			tr.Protocols.SetUnencryptedHTTP2(true)
		}
		t.Cleanup(tr.CloseIdleConnections)
		fleet = append(fleet, instance{addr, &http.Client{Transport: tr, Timeout: 10 * time.Second}})
	}

	status := func(in instance, path string) (int, http.Header) {
		resp, err := in.c.Get("http://" + in.addr + path)
		if err != nil {
			t.Fatalf("%s%s: %v", in.addr, path, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if path == "/" && resp.ProtoMajor != 2 && in.c.Transport.(*http.Transport).Protocols != nil {
			t.Errorf("h2c instance answered over HTTP/%d", resp.ProtoMajor)
		}
		return resp.StatusCode, resp.Header
	}

	// Three instances, one limit: 3 x 15 requests against 20 a minute.
	const perInstance = 15
	startMinute := time.Now().Unix() / 60
	var mu sync.Mutex
	admitted, refused := 0, 0
	var wg sync.WaitGroup
	for _, in := range fleet {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range perInstance {
				st, h := status(in, "/")
				mu.Lock()
				switch st {
				case 200:
					admitted++
				case 429:
					refused++
					if ra, _ := strconv.Atoi(h.Get("Retry-After")); ra < 1 || ra > 60 {
						t.Errorf("429 with Retry-After %q", h.Get("Retry-After"))
					}
				default:
					t.Errorf("%s: status %d", in.addr, st)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	windows := int(time.Now().Unix()/60 - startMinute + 1)
	t.Logf("admitted %d, refused %d of %d over %d window(s) of the limit %d/min", admitted, refused, 3*perInstance, windows, limitPerMinute)
	// A fixed window: within the limit, plus one window's slack when the
	// run crossed a minute.
	switch {
	case admitted > limitPerMinute*min(windows, 2):
		t.Errorf("admitted %d, above the shared limit %d (windows: %d)", admitted, limitPerMinute, windows)
	case admitted < limitPerMinute:
		t.Errorf("admitted only %d of a limit of %d", admitted, limitPerMinute)
	case windows == 1 && admitted != limitPerMinute:
		t.Errorf("admitted %d in one window, want exactly %d", admitted, limitPerMinute)
	}

	// The service's timeout: a service that never answers costs the
	// timeout, then the failure mode (deny: 500).
	for _, in := range fleet {
		start := time.Now()
		if st, _ := status(in, "/slow"); st != 500 {
			t.Errorf("%s /slow: status %d, want 500 (deny after the timeout)", in.addr, st)
		}
		if took := time.Since(start); took < blackholeTimeout {
			t.Errorf("%s /slow: answered after %v, before the %v timeout", in.addr, took, blackholeTimeout)
		}
	}

	// The service goes down: allow lets requests through, deny refuses.
	for _, in := range fleet {
		if st, _ := status(in, "/allow"); st != 200 {
			t.Errorf("%s /allow with the service up: %d", in.addr, st)
		}
	}
	stopService()
	for _, in := range fleet {
		if st, _ := status(in, "/allow"); st != 200 {
			t.Errorf("%s /allow with the service down: %d, want 200 (failure_mode: allow)", in.addr, st)
		}
		if st, _ := status(in, "/deny"); st != 500 {
			t.Errorf("%s /deny with the service down: %d, want 500 (failure_mode: deny)", in.addr, st)
		}
	}
}
