package proxy

import (
	"bytes"
	"crypto/tls"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/simdedge/simdedge/internal/testcert"
	"github.com/simdedge/simdedge/internal/testenv"
	"github.com/simdedge/simdedge/internal/testnet"
	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/edgetls"
	"github.com/simdedge/simdedge/server/internal/servetest"
	"github.com/simdedge/simdedge/server/upstream"
)

// https upstreams (issue 20, "Upstreams"), on every engine: TLS upstreams
// are handed to goroutines by the loop-proxy run too. A failed handshake
// is a connect failure for the policy (it fails over) answered 502, not
// the 503 of a pool whose targets refuse connections, and the log says
// why.

// tlsBackend is an https origin whose handler records each request's TLS
// state.
type tlsBackend struct {
	srv     *httptest.Server
	mu      sync.Mutex
	resumed []bool
	peers   int // requests that presented a client certificate
	checks  int // active health checks, over TLS
}

func startTLSBackend(t *testing.T, leaf *testcert.Pair, clientCA *testcert.CA, connState ...func(net.Conn, http.ConnState)) *tlsBackend {
	t.Helper()
	b := &tlsBackend{}
	b.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.mu.Lock()
		b.resumed = append(b.resumed, r.TLS != nil && r.TLS.DidResume)
		if r.TLS != nil && len(r.TLS.PeerCertificates) > 0 {
			b.peers++
		}
		if r.TLS != nil && r.UserAgent() == probeUserAgent {
			b.checks++
		}
		b.mu.Unlock()
		io.WriteString(w, "secure")
	}))
	b.srv.TLS = &tls.Config{Certificates: []tls.Certificate{leaf.TLS}}
	if clientCA != nil {
		b.srv.TLS.ClientCAs = clientCA.Pool
		b.srv.TLS.ClientAuth = tls.RequireAndVerifyClientCert
	}
	for _, f := range connState {
		b.srv.Config.ConnState = f
	}
	b.srv.StartTLS()
	t.Cleanup(b.srv.Close)
	return b
}

func (b *tlsBackend) addr() string { return b.srv.Listener.Addr().String() }

// logBuffer is a slog logger into a buffer, safe for concurrent writes.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// startTLSProxy proxies to addr over TLS with o, logging into the
// returned buffer.
func startTLSProxy(t *testing.T, addr string, o edgetls.ClientOptions) (string, *Upstream, *logBuffer) {
	t.Helper()
	cfg, err := edgetls.ClientConfig(o)
	if err != nil {
		t.Fatal(err)
	}
	logs := &logBuffer{}
	up, err := NewUpstream(UpstreamOptions{Targets: []string{addr}, TLS: cfg})
	if err != nil {
		t.Fatal(err)
	}
	edge := startProxyHandler(t, up, slog.New(slog.NewTextHandler(logs, nil)))
	return edge, up, logs
}

// startProxyHandler serves a proxy to up, logging to log.
func startProxyHandler(t *testing.T, up *Upstream, log *slog.Logger) string {
	t.Helper()
	s := server.New(server.Options{Handler: New(up, Options{Logger: log}), LoopProxy: testLoopProxy})
	t.Cleanup(up.Close) // after the server has shut down
	return servetest.Serve(t, s, testEngine)
}

func fetch(t *testing.T, c *http.Client, edge string) (int, string) {
	t.Helper()
	resp, err := c.Get("http://" + edge + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

func TestHTTPSUpstream(t *testing.T) {
	testenv.CheckGoroutines(t)
	ca, other := testcert.NewCA(t, "backend CA"), testcert.NewCA(t, "other CA")
	leaf := ca.Leaf(t, "backend", []string{"backend.internal"}, time.Time{}, time.Time{})
	be := startTLSBackend(t, leaf, nil)
	for _, tc := range []struct {
		name   string
		o      edgetls.ClientOptions
		status int
		log    string
	}{
		{"verified", edgetls.ClientOptions{CA: ca.File, ServerName: "backend.internal"}, 200, ""},
		{"wrong CA", edgetls.ClientOptions{CA: other.File, ServerName: "backend.internal"}, 502, "failed to verify certificate: x509: certificate signed by unknown authority"},
		{"wrong server_name", edgetls.ClientOptions{CA: ca.File, ServerName: "other.internal"}, 502, "not other.internal"},
		// The default name is the target's host, 127.0.0.1: not in the
		// certificate.
		{"default server_name", edgetls.ClientOptions{CA: ca.File}, 502, "127.0.0.1"},
		{"insecure_skip_verify", edgetls.ClientOptions{CA: other.File, InsecureSkipVerify: true}, 200, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			edge, _, logs := startTLSProxy(t, be.addr(), tc.o)
			status, body := fetch(t, client(t), edge)
			if status != tc.status {
				t.Fatalf("status %d, want %d (log: %s)", status, tc.status, logs)
			}
			if tc.status == 200 && body != "secure" {
				t.Fatalf("body %q", body)
			}
			if tc.log != "" && !strings.Contains(logs.String(), tc.log) {
				t.Fatalf("log lacks %q: %s", tc.log, logs)
			}
		})
	}
}

func TestHTTPSUpstreamClientCert(t *testing.T) {
	testenv.CheckGoroutines(t)
	ca := testcert.NewCA(t, "backend CA")
	leaf := ca.Leaf(t, "backend", []string{"backend.internal"}, time.Time{}, time.Time{})
	cc := ca.Client(t, "edge", "edge.internal")
	be := startTLSBackend(t, leaf, ca)
	base := edgetls.ClientOptions{CA: ca.File, ServerName: "backend.internal"}
	edge, _, _ := startTLSProxy(t, be.addr(), base)
	if status, _ := fetch(t, client(t), edge); status != 502 {
		t.Fatalf("without a client certificate: status %d, want 502", status)
	}
	withCert := base
	withCert.Cert = edgetls.CertFiles{Cert: cc.CertFile, Key: cc.KeyFile}
	edge, _, logs := startTLSProxy(t, be.addr(), withCert)
	if status, _ := fetch(t, client(t), edge); status != 200 {
		t.Fatalf("with a client certificate: status %d (log: %s)", status, logs)
	}
	be.mu.Lock()
	defer be.mu.Unlock()
	if be.peers != 1 {
		t.Fatalf("%d requests presented a certificate, want 1", be.peers)
	}
}

// TestHTTPSUpstreamResumes: a new connection after the pooled one is
// closed resumes the first's session (the target's session cache).
func TestHTTPSUpstreamResumes(t *testing.T) {
	testenv.CheckGoroutines(t)
	ca := testcert.NewCA(t, "backend CA")
	leaf := ca.Leaf(t, "backend", []string{"backend.internal"}, time.Time{}, time.Time{})
	be := startTLSBackend(t, leaf, nil)
	edge, up, logs := startTLSProxy(t, be.addr(), edgetls.ClientOptions{CA: ca.File, ServerName: "backend.internal"})
	c := client(t)
	const requests = 3
	for i := range requests {
		if status, _ := fetch(t, c, edge); status != 200 {
			t.Fatalf("request %d: status %d (log: %s)", i, status, logs)
		}
		// Drop the pooled connection, so the next request dials.
		for _, tg := range up.targets {
			tg.closeIdle()
		}
	}
	be.mu.Lock()
	defer be.mu.Unlock()
	if len(be.resumed) != requests || be.resumed[0] {
		t.Fatalf("resumed %v: the first connection cannot resume", be.resumed)
	}
	for i, r := range be.resumed[1:] {
		if !r {
			t.Fatalf("connection %d did not resume: %v", i+1, be.resumed)
		}
	}
}

// TestHTTPSUpstreamKeepAlive: pooled TLS connections are reused.
func TestHTTPSUpstreamKeepAlive(t *testing.T) {
	testenv.CheckGoroutines(t)
	ca := testcert.NewCA(t, "backend CA")
	leaf := ca.Leaf(t, "backend", []string{"backend.internal"}, time.Time{}, time.Time{})
	var conns sync.Map
	be := startTLSBackend(t, leaf, nil, func(c net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Store(c, true)
		}
	})
	edge, _, _ := startTLSProxy(t, be.addr(), edgetls.ClientOptions{CA: ca.File, ServerName: "backend.internal"})
	c := client(t)
	for range 5 {
		if status, _ := fetch(t, c, edge); status != 200 {
			t.Fatalf("status %d", status)
		}
	}
	n := 0
	conns.Range(func(any, any) bool { n++; return true })
	if n != 1 {
		t.Fatalf("%d upstream connections for 5 sequential requests, want 1", n)
	}
}

// TestHTTPSUpstreamActiveHealth: active checks of an https target speak
// TLS (the backend sees them), and a target whose certificate fails
// verification is taken out.
func TestHTTPSUpstreamActiveHealth(t *testing.T) {
	testenv.CheckGoroutines(t)
	const interval = 50 * time.Millisecond
	// wait covers a loaded machine; the checks need 2-3 intervals.
	const wait = 5 * time.Second
	ca, other := testcert.NewCA(t, "backend CA"), testcert.NewCA(t, "other CA")
	leaf := ca.Leaf(t, "backend", []string{"backend.internal"}, time.Time{}, time.Time{})
	be := startTLSBackend(t, leaf, nil)
	active := &upstream.ActiveOptions{Path: "/healthz", Interval: interval, Timeout: interval, HealthyAfter: 1, UnhealthyAfter: 2}
	for _, tc := range []struct {
		name      string
		ca        string
		available bool
	}{
		{"verified", ca.File, true},
		{"wrong CA", other.File, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := edgetls.ClientConfig(edgetls.ClientOptions{CA: tc.ca, ServerName: "backend.internal"})
			if err != nil {
				t.Fatal(err)
			}
			up, err := NewUpstream(UpstreamOptions{Targets: []string{be.addr()}, TLS: cfg, Active: active})
			if err != nil {
				t.Fatal(err)
			}
			defer up.Close()
			up.Start()
			target := up.Pool().Targets()[0]
			if tc.available {
				took, ok := testnet.Poll(wait, func() bool {
					be.mu.Lock()
					defer be.mu.Unlock()
					return be.checks >= 2
				})
				if !ok {
					t.Fatalf("no TLS health checks reached the backend after %v", took)
				}
				if !target.Available() {
					t.Fatal("verified target out")
				}
				return
			}
			if took, ok := testnet.Poll(wait, func() bool { return !target.Available() }); !ok {
				t.Fatalf("target with an unverifiable certificate still in after %v", took)
			}
		})
	}
}

// TestHTTPSUpstreamReload: a reload keeps the target (its health) but not
// its idle connections dialed with another TLS config, or with none.
func TestHTTPSUpstreamReload(t *testing.T) {
	testenv.CheckGoroutines(t)
	ca := testcert.NewCA(t, "backend CA")
	leaf := ca.Leaf(t, "backend", []string{"backend.internal"}, time.Time{}, time.Time{})
	be := startTLSBackend(t, leaf, nil)
	cfg := func() *tls.Config {
		c, err := edgetls.ClientConfig(edgetls.ClientOptions{CA: ca.File, ServerName: "backend.internal"})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	first, err := NewUpstream(UpstreamOptions{Targets: []string{be.addr()}, TLS: cfg()})
	if err != nil {
		t.Fatal(err)
	}
	first.Start()
	tg := first.targets[0]
	now := time.Now()
	c, err := tg.get(now, false, testTimeout)
	if err != nil {
		t.Fatal(err)
	}
	tg.put(c, now)
	if again, err := tg.get(now, false, testTimeout); err != nil || again != c {
		t.Fatalf("same config: pooled connection not reused (%v)", err)
	} else {
		tg.put(again, now)
	}
	second, err := NewUpstream(UpstreamOptions{Targets: []string{be.addr()}, TLS: cfg(), Previous: first})
	if err != nil {
		t.Fatal(err)
	}
	second.Start()
	first.Close()
	defer second.Close()
	if second.targets[0] != tg {
		t.Fatal("target not kept across the reload")
	}
	c2, err := tg.get(now, false, testTimeout)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.nc.Close()
	if c2 == c || !c2.fresh || c2.tlsc != tg.tlsc.Load() {
		t.Fatal("a connection of the previous TLS config was reused")
	}
}
