package admin

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/simdedge/simdedge/server/accesslog"
	"github.com/simdedge/simdedge/server/metrics"
	"github.com/simdedge/simdedge/server/upstream"
)

func testAdmin(t *testing.T) (*Admin, *metrics.Set) {
	t.Helper()
	set := metrics.NewSet()
	r := set.Route("api")
	for shard := range 5 { // several shards, merged at scrape
		r.Observe(shard, metrics.MethodGet, 200, time.Millisecond, 10, 20)
	}
	r.Observe(1, metrics.MethodPost, 503, time.Second, 10, 20)
	l := set.Listener("127.0.0.1:80")
	l.Opened(0)
	l2 := set.Listener("127.0.0.1:443")
	r.ObserveAt(2, l2.Slot(), metrics.MethodGet, 200, time.Millisecond, 10, 20)
	l2.TLSHandshake(1, metrics.TLSOK)
	l2.TLSHandshake(2, metrics.TLSFailed)
	l2.HTTP2(0, metrics.H2Conn)
	l2.HTTP2(1, metrics.H2Stream)
	l2.HTTP2(2, metrics.H2Stream)
	l2.HTTP2(3, metrics.H2Reset)
	l.ParseError(3, 414)
	pool, err := upstream.New(upstream.Options{Name: "app", Targets: []upstream.TargetSpec{{Address: "127.0.0.1:1"}, {Address: "127.0.0.1:2"}}})
	if err != nil {
		t.Fatal(err)
	}
	pool.Targets()[0].ObserveLatency(3, 3*time.Millisecond)
	alog, err := accesslog.Open(accesslog.Options{Writer: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { alog.Close() })
	a := New(Options{Metrics: set, Pools: func() map[string]*upstream.Pool { return map[string]*upstream.Pool{"app": pool} },
		AccessLog: alog,
		Transports: func() []TransportStat {
			return []TransportStat{{Transport: "xdp", Listener: "veth0", Name: "steered", Value: 7},
				{Transport: "rdma", Listener: "127.0.0.1:7471", Name: "credits_held", Value: 2, Gauge: true}}
		},
		Config: func() ([]byte, error) {
			return []byte("tls: {cert: /etc/c.pem, key: /etc/k.pem}\nbasic_auth: {users: [{name: a, password_hash: $2y$x}]}\n"), nil
		}})
	return a, set
}

// TestCollectorMerges: the scrape sums the shards, with the names and
// labels docs/guide-operations.md documents.
func TestCollectorMerges(t *testing.T) {
	a, _ := testAdmin(t)
	c := &collector{set: a.o.Metrics, pools: a.o.Pools}
	want := `
# HELP simdedge_requests_total Requests answered, by listener address, route, method and status class.
# TYPE simdedge_requests_total counter
simdedge_requests_total{listener="127.0.0.1:80",method="GET",route="api",status_class="2xx"} 5
simdedge_requests_total{listener="127.0.0.1:80",method="POST",route="api",status_class="5xx"} 1
simdedge_requests_total{listener="127.0.0.1:443",method="GET",route="api",status_class="2xx"} 1
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want), "simdedge_requests_total"); err != nil {
		t.Error(err)
	}
	want = `
# HELP simdedge_tls_handshakes_total TLS handshakes on a listener, by outcome (ok, failed, plain_http, not_tls).
# TYPE simdedge_tls_handshakes_total counter
simdedge_tls_handshakes_total{listener="127.0.0.1:443",outcome="failed"} 1
simdedge_tls_handshakes_total{listener="127.0.0.1:443",outcome="ok"} 1
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want), "simdedge_tls_handshakes_total"); err != nil {
		t.Error(err)
	}
	// HTTP/2 series only for the listener that saw HTTP/2, merged over
	// shards.
	want = `
# HELP simdedge_http2_connections_total Connections that began HTTP/2 on a listener (h2c prior knowledge or h2 by ALPN).
# TYPE simdedge_http2_connections_total counter
simdedge_http2_connections_total{listener="127.0.0.1:443"} 1
# HELP simdedge_http2_streams_total HTTP/2 streams opened on a listener (each carries one request).
# TYPE simdedge_http2_streams_total counter
simdedge_http2_streams_total{listener="127.0.0.1:443"} 2
# HELP simdedge_http2_stream_resets_total HTTP/2 streams the client reset or the server refused, on a listener (the rapid-reset bound counts these per connection).
# TYPE simdedge_http2_stream_resets_total counter
simdedge_http2_stream_resets_total{listener="127.0.0.1:443"} 1
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want), "simdedge_http2_connections_total", "simdedge_http2_streams_total", "simdedge_http2_stream_resets_total"); err != nil {
		t.Error(err)
	}
	want = `
# HELP simdedge_upstream_requests_total Requests sent to an upstream target.
# TYPE simdedge_upstream_requests_total counter
simdedge_upstream_requests_total{target="127.0.0.1:1",upstream="app"} 0
simdedge_upstream_requests_total{target="127.0.0.1:2",upstream="app"} 0
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want), "simdedge_upstream_requests_total"); err != nil {
		t.Error(err)
	}
	if n := testutil.CollectAndCount(c, "simdedge_parse_errors_total"); n != 2*metrics.ParseKinds { // two listeners
		t.Errorf("parse error series = %d, want %d", n, 2*metrics.ParseKinds)
	}
	problems, err := testutil.CollectAndLint(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
}

func get(t *testing.T, h http.Handler, path, accept string) (int, string, string) {
	t.Helper()
	req := httptest.NewRequest("GET", path, nil)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	b, _ := io.ReadAll(w.Result().Body)
	return w.Code, w.Header().Get("Content-Type"), string(b)
}

func TestEndpoints(t *testing.T) {
	a, _ := testAdmin(t)
	h := a.Handler()
	if code, _, _ := get(t, h, "/healthz", ""); code != 200 {
		t.Errorf("/healthz = %d", code)
	}
	if code, _, _ := get(t, h, "/ready", ""); code != 200 {
		t.Errorf("/ready = %d before draining", code)
	}
	a.SetDraining()
	if code, _, _ := get(t, h, "/ready", ""); code != 503 {
		t.Errorf("/ready = %d while draining, want 503", code)
	}
	code, _, body := get(t, h, "/upstreams", "")
	if code != 200 || !strings.Contains(body, `"address": "127.0.0.1:2"`) || !strings.Contains(body, `"in_flight": 0`) {
		t.Errorf("/upstreams = %d %s", code, body)
	}
	code, _, body = get(t, h, "/config", "")
	if code != 200 || strings.Contains(body, "$2y$") || !strings.Contains(body, "/etc/k.pem") {
		t.Errorf("/config = %d, secret shown or key path lost:\n%s", code, body)
	}
	if code, _, _ := get(t, h, "/debug/pprof/", ""); code != 404 {
		t.Errorf("/debug/pprof/ = %d without pprof: true", code)
	}
	if code, _, _ := get(t, New(Options{PProf: true}).Handler(), "/debug/pprof/", ""); code != 200 {
		t.Errorf("/debug/pprof/ = %d with pprof: true", code)
	}
	_, ct, body := get(t, h, "/metrics", "")
	if !strings.HasPrefix(ct, "text/plain") || !strings.Contains(body, "simdedge_build_info") || !strings.Contains(body, "go_goroutines") || !strings.Contains(body, "process_") {
		t.Errorf("/metrics (text) content type %q, body lacks build, Go or process metrics", ct)
	}
	_, ct, body = get(t, h, "/metrics", "application/openmetrics-text; version=1.0.0")
	if !strings.HasPrefix(ct, "application/openmetrics-text") || !strings.HasSuffix(body, "# EOF\n") {
		t.Errorf("/metrics (OpenMetrics) content type %q", ct)
	}
}

func TestRedact(t *testing.T) {
	in := `
listen: 127.0.0.1:1
tls: {cert: c.pem, key: k.pem}
auth:
  password: hunter2
  Client_Secret: s1
  api_token: t1
  users: [{name: a, password_hash: h1}, {name: b, hashes: [h2, h3]}]
  private_key: {pem: inline}
notsecret_keys: 3
`
	out, err := Redact([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"hunter2", "s1", "t1", "h1", "h2", "h3", "inline"} {
		if bytes.Contains(out, []byte(s)) {
			t.Errorf("%q not redacted:\n%s", s, out)
		}
	}
	for _, s := range []string{"k.pem", "c.pem", "name: a", "notsecret_keys: 3"} {
		if !bytes.Contains(out, []byte(s)) {
			t.Errorf("%q lost:\n%s", s, out)
		}
	}
	if _, err := Redact([]byte("a: [")); err == nil {
		t.Error("bad YAML redacted without error")
	}
}

// TestCollectorObserve: the phase-2 families (upstream response time,
// access-log lines and drops, the transports' own counters) with their
// labels.
func TestCollectorObserve(t *testing.T) {
	a, _ := testAdmin(t)
	c := &collector{set: a.o.Metrics, pools: a.o.Pools, log: a.o.AccessLog, transports: a.o.Transports}
	want := `
# HELP simdedge_access_log_dropped_total Access-log lines dropped because the sink stalled or failed (never waited for).
# TYPE simdedge_access_log_dropped_total counter
simdedge_access_log_dropped_total 0
# HELP simdedge_transport_events_total Events counted by the xdp and rdma transports themselves (xdp: steered, passed, fallback, dropped by the steering program; received, sent, dropped frames; rdma: connections accepted, requests served inline), by transport, listener and event.
# TYPE simdedge_transport_events_total counter
simdedge_transport_events_total{event="steered",listener="veth0",transport="xdp"} 7
# HELP simdedge_transport_state Current state of the xdp and rdma transports (rdma: connections open, receive credits held by messages being served, messages queued), by transport, listener and item.
# TYPE simdedge_transport_state gauge
simdedge_transport_state{item="credits_held",listener="127.0.0.1:7471",transport="rdma"} 2
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want), "simdedge_access_log_dropped_total", "simdedge_transport_events_total", "simdedge_transport_state"); err != nil {
		t.Error(err)
	}
	if n := testutil.CollectAndCount(c, "simdedge_upstream_response_seconds"); n != 1 {
		t.Errorf("%d upstream latency series, want 1 (the observed target)", n)
	}
}

// TestPromtool runs `promtool check metrics` on a scrape.
func TestPromtool(t *testing.T) {
	tool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("REQUIRE_PROMETHEUS") != "" {
			t.Fatal("promtool missing and REQUIRE_PROMETHEUS is set (apt-get install prometheus)")
		}
		t.Skip("promtool not installed (Debian package prometheus)")
	}
	a, _ := testAdmin(t)
	_, _, body := get(t, a.Handler(), "/metrics", "")
	cmd := exec.Command(tool, "check", "metrics")
	cmd.Stdin = strings.NewReader(body)
	out, err := cmd.CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) != 0 {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
}

// TestRedactBasicAuth: basic_auth keeps its user names and hides their
// bcrypt hashes.
func TestRedactBasicAuth(t *testing.T) {
	out, err := Redact([]byte("routes:\n  - basic_auth: {realm: edge, users: {alice: \"$2a$10$xyz\"}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "$2a$") || !strings.Contains(string(out), "alice") {
		t.Errorf("redacted:\n%s", out)
	}
}
