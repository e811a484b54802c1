package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/simdedge/simdedge/internal/testcert"
	"github.com/simdedge/simdedge/internal/testnet"
)

// Bounds of TestDrainDelay.
const (
	// testDrainDelay is the configured drain_delay: long enough for tens
	// of requests from each client at drainPace.
	configDrainDelay = 2 * time.Second
	drainPace        = 40 * time.Millisecond
	// drainMinServed is how many requests each client must have had
	// served after /ready turned 503 (it sends about 50 in the delay).
	drainMinServed = 3
)

// TestDrainDelay runs the real binary with timeouts.drain_delay and, after
// SIGTERM, a client that watches the admin /ready while three others keep
// sending requests (HTTP/1.1 keep-alive on a plain listener, HTTP/1.1 and
// h2 over TLS; the plain one and h2 through a proxy route):
// /ready turns 503, both clients are still served after that, every
// HTTP/1.1 response in the delay says "Connection: close" and the h2
// client is made to reconnect (GOAWAY), no request fails before the delay
// has passed, and the process exits 0, not before the delay. On each
// engine and proxy path.
func TestDrainDelay(t *testing.T) {
	bin := buildBinary(t)
	for _, e := range []struct{ name, engine, onLoop string }{
		{"goroutine", "goroutine", "false"},
		{"loop", "loop", "false"},
		{"loop-proxy", "loop", "true"},
	} {
		t.Run(e.name, func(t *testing.T) { testDrainDelay(t, bin, e.engine, e.onLoop) })
	}
}

// drainClient sends GETs at drainPace and records what happened.
type drainClient struct {
	c     *http.Client
	url   string
	dials atomic.Int32
	// Filled by run.
	servedAfterReady int
	keptAlive        int       // responses after /ready's 503 without Connection: close
	firstFail        time.Time // when the first request failed (zero: none)
	failErr          error
	proto            int // the HTTP major version of the last response
}

// newDrainClient is HTTP/1.1 (over TLS with tlsCfg), or h2 over TLS with
// tlsCfg and h2.
func newDrainClient(url string, tlsCfg *tls.Config, h2 bool) *drainClient {
	dc := &drainClient{url: url}
	d := &net.Dialer{Timeout: binWait}
	var tr *http.Transport
	if h2 {
		tr = testnet.H2Transport(tlsCfg)
	} else {
		// A Transport with its own TLS config and no
		// ForceAttemptHTTP2 offers only http/1.1 by ALPN.
		tr = &http.Transport{TLSClientConfig: tlsCfg}
	}
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		dc.dials.Add(1)
		return d.DialContext(ctx, network, addr)
	}
	dc.c = &http.Client{Timeout: binWait, Transport: tr}
	return dc
}

// run sends until the first failure (the listeners have closed) or until
// exited; readyAt gives the time /ready first answered 503 (zero: not yet).
func (dc *drainClient) run(exited <-chan struct{}, readyAt func() time.Time) {
	defer dc.c.CloseIdleConnections()
	for i := 0; i < int(binWait/drainPace); i++ {
		select {
		case <-exited:
			return
		case <-time.After(drainPace):
		}
		start := time.Now()
		resp, err := dc.c.Get(dc.url)
		if err != nil {
			dc.firstFail, dc.failErr = time.Now(), err
			return
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		dc.proto = resp.ProtoMajor
		if r := readyAt(); !r.IsZero() && start.After(r) && resp.StatusCode == 200 {
			dc.servedAfterReady++
			if !resp.Close && resp.ProtoMajor == 1 {
				dc.keptAlive++
			}
		}
	}
}

func testDrainDelay(t *testing.T, bin, engine, onLoop string) {
	dir := t.TempDir()
	ca := testcert.NewCA(t, "drain CA")
	var z time.Time
	leaf := ca.Leaf(t, "edge", []string{"edge.example"}, z, z)
	plain, tlsAddr, adminAddr := freeAddr(t), freeAddr(t), freeAddr(t)
	file := filepath.Join(dir, "c.yaml")
	writeFile(t, file, fmt.Sprintf(`engine: %s
proxy_on_loop: %s
listeners:
  - address: %q
  - address: %q
    tls: {certificates: [{cert: %q, key: %q}]}
admin: {address: %q}
timeouts: {drain_delay: %s}
upstreams:
  - name: app
    targets: [%q]
routes:
  - match: {path_prefix: /api}
    proxy: {upstream: app}
  - match: {path_prefix: /}
    respond: {status: 200, body: "ok\n"}
`, engine, onLoop, plain, tlsAddr, leaf.CertFile, leaf.KeyFile, adminAddr, configDrainDelay, startOriginHTTP(t)))
	cmd, logs, _ := runBinary(t, bin, file, io.Discard)
	probe := &http.Client{Timeout: binWait, Transport: &http.Transport{}}
	defer probe.CloseIdleConnections()
	waitServing(t, probe, "http://"+adminAddr+"/ready", logs)

	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	tlsCfg := &tls.Config{RootCAs: pool, ServerName: "edge.example"}
	h1 := newDrainClient("http://"+plain+"/api/x", nil, false)
	h1tls := newDrainClient("https://"+tlsAddr+"/", tlsCfg, false)
	h2 := newDrainClient("https://"+tlsAddr+"/api/x", tlsCfg, true)
	clients := []struct {
		name  string
		dc    *drainClient
		proto int
	}{{"http/1.1", h1, 1}, {"http/1.1 over TLS", h1tls, 1}, {"h2", h2, 2}}
	for _, c := range clients {
		dc := c.dc
		resp, err := dc.c.Get(dc.url)
		if err != nil {
			t.Fatalf("before SIGTERM: %v; log: %s", err, logs.String())
		}
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.Close {
			t.Fatalf("before SIGTERM: %d close=%v", resp.StatusCode, resp.Close)
		}
	}

	var readyMu sync.Mutex
	var readyAt time.Time
	ready := func() time.Time { readyMu.Lock(); defer readyMu.Unlock(); return readyAt }
	exited := make(chan struct{})
	var exitErr error
	sigterm := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil { // by PID: the process this test started
		t.Fatal(err)
	}
	go func() { exitErr = cmd.Wait(); close(exited) }()
	var wg sync.WaitGroup
	wg.Add(1 + len(clients))
	go func() { // the load balancer's view
		defer wg.Done()
		for i := 0; i < int(binWait/drainPace) && ready().IsZero(); i++ {
			resp, err := probe.Get("http://" + adminAddr + "/ready")
			if err != nil {
				return
			}
			resp.Body.Close()
			if resp.StatusCode == 503 {
				readyMu.Lock()
				readyAt = time.Now()
				readyMu.Unlock()
			}
			time.Sleep(drainPace / 4)
		}
	}()
	for _, c := range clients {
		go func() { defer wg.Done(); c.dc.run(exited, ready) }()
	}
	select {
	case <-exited:
	case <-time.After(binWait):
		cmd.Process.Kill()
		<-exited
		t.Fatalf("simdedge did not exit after SIGTERM; log: %s", logs.String())
	}
	exitAt := time.Now()
	wg.Wait()

	if exitErr != nil {
		t.Errorf("exit: %v; log: %s", exitErr, logs.String())
	}
	if exitAt.Sub(sigterm) < configDrainDelay {
		t.Errorf("exited %v after SIGTERM, before the drain delay of %v", exitAt.Sub(sigterm), configDrainDelay)
	}
	if ready().IsZero() {
		t.Fatalf("/ready never answered 503; log: %s", logs.String())
	}
	for _, c := range clients {
		dc := c.dc
		if dc.servedAfterReady < drainMinServed {
			t.Errorf("%s: %d requests served after /ready turned 503, want at least %d (first failure %v)", c.name, dc.servedAfterReady, drainMinServed, dc.failErr)
		}
		if !dc.firstFail.IsZero() && dc.firstFail.Before(sigterm.Add(configDrainDelay)) {
			t.Errorf("%s: a request failed %v after SIGTERM, within the drain delay: %v", c.name, dc.firstFail.Sub(sigterm), dc.failErr)
		}
		if dc.dials.Load() < 2 {
			t.Errorf("%s: the client never reconnected (%d connections): it was not told to go", c.name, dc.dials.Load())
		}
		if dc.proto != c.proto {
			t.Errorf("%s: HTTP/%d", c.name, dc.proto)
		}
		if dc.keptAlive > 0 {
			t.Errorf("%s: %d responses after /ready turned 503 without Connection: close", c.name, dc.keptAlive)
		}
	}
}
