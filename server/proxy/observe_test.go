package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/simdedge/simdedge/internal/testnet"
	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/accesslog"
	"github.com/simdedge/simdedge/server/internal/servetest"
	"github.com/simdedge/simdedge/server/metrics"
	"github.com/simdedge/simdedge/server/rewrite"
	"github.com/simdedge/simdedge/server/router"
	"github.com/simdedge/simdedge/server/trace"
)

var observeOptions = server.Options{
	RequestID: server.RequestIDOptions{Header: "X-Request-Id", Generate: true},
	Trace:     server.TraceOptions{Propagate: true},
}

func echoGet(t *testing.T, c *http.Client, addr string, hdr map[string][]string) (*http.Response, echoed) {
	t.Helper()
	req, _ := http.NewRequest("GET", "http://"+addr+"/x", nil)
	for k, vs := range hdr {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	resp, body := get(t, c, req)
	var e echoed
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	return resp, e
}

// TestProxyRequestID: the client's valid ID, or a generated one, goes to
// the upstream (once) and back to the client; the upstream's own field
// does not reach the client.
func TestProxyRequestID(t *testing.T) {
	o := startOrigin(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Request-Id", "from-upstream")
		headerEcho(w, r)
	}))
	addr, _ := startProxy(t, UpstreamOptions{Targets: []string{o.addr}}, observeOptions)
	c := client(t)
	resp, e := echoGet(t, c, addr, map[string][]string{"X-Request-Id": {"abc-123"}})
	if got := e.Header.Values("X-Request-Id"); len(got) != 1 || got[0] != "abc-123" {
		t.Errorf("upstream got %q", got)
	}
	if got := resp.Header.Values("X-Request-Id"); len(got) != 1 || got[0] != "abc-123" {
		t.Errorf("client got %q", got)
	}
	for _, in := range [][]string{nil, {"bad id"}, {"a", "b"}} {
		hdr := map[string][]string{}
		if in != nil {
			hdr["X-Request-Id"] = in
		}
		resp, e := echoGet(t, c, addr, hdr)
		up, down := e.Header.Values("X-Request-Id"), resp.Header.Values("X-Request-Id")
		if len(up) != 1 || len(down) != 1 || up[0] != down[0] || !trace.ValidRequestID([]byte(up[0])) || up[0] == "bad id" {
			t.Errorf("sent %q: upstream got %q, client %q", in, up, down)
		}
	}
}

const clientTP = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

// TestProxyTraceparent: a valid traceparent goes upstream with the same
// trace ID and flags and a new parent ID, tracestate with it; an invalid
// one (or two) is dropped with its tracestate; with Generate a request
// without one starts a trace.
func TestProxyTraceparent(t *testing.T) {
	o := startOrigin(t, headerEcho)
	addr, _ := startProxy(t, UpstreamOptions{Targets: []string{o.addr}}, observeOptions)
	c := client(t)
	_, e := echoGet(t, c, addr, map[string][]string{"Traceparent": {clientTP}, "Tracestate": {"congo=t61rcWkgMzE", "rojo=00f067aa0ba902b7"}})
	tp := e.Header.Values("Traceparent")
	if len(tp) != 1 || len(tp[0]) != trace.TraceparentLen || tp[0][:36] != clientTP[:36] || tp[0][52:] != "-01" || tp[0][36:52] == clientTP[36:52] {
		t.Errorf("traceparent upstream %q (sent %s)", tp, clientTP)
	} else if _, ok := trace.ParseTraceparent([]byte(tp[0])); !ok {
		t.Errorf("traceparent upstream %q invalid", tp)
	}
	if ts := e.Header.Values("Tracestate"); len(ts) != 1 || ts[0] != "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7" {
		t.Errorf("tracestate upstream %q", ts)
	}
	for _, bad := range [][]string{{"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01"}, {"junk"}, {clientTP, clientTP}} {
		_, e := echoGet(t, c, addr, map[string][]string{"Traceparent": bad, "Tracestate": {"congo=x"}})
		if tp, ts := e.Header.Values("Traceparent"), e.Header.Values("Tracestate"); len(tp)+len(ts) != 0 {
			t.Errorf("sent %q: upstream got traceparent %q tracestate %q", bad, tp, ts)
		}
	}
	_, e = echoGet(t, c, addr, nil)
	if tp := e.Header.Values("Traceparent"); len(tp) != 0 {
		t.Errorf("a trace started without Generate: %q", tp)
	}

	gen := observeOptions
	gen.Trace.Generate = true
	addr2, _ := startProxy(t, UpstreamOptions{Targets: []string{o.addr}}, gen)
	_, e = echoGet(t, c, addr2, nil)
	if tp := e.Header.Values("Traceparent"); len(tp) != 1 {
		t.Errorf("no trace started: %q", tp)
	} else if _, ok := trace.ParseTraceparent([]byte(tp[0])); !ok {
		t.Errorf("started trace %q invalid", tp)
	}
}

// TestProxyTraceOff: without Propagate, traceparent passes untouched.
func TestProxyTraceOff(t *testing.T) {
	o := startOrigin(t, headerEcho)
	addr, _ := startProxy(t, UpstreamOptions{Targets: []string{o.addr}}, server.Options{})
	_, e := echoGet(t, client(t), addr, map[string][]string{"Traceparent": {"junk"}})
	if tp := e.Header.Values("Traceparent"); len(tp) != 1 || tp[0] != "junk" {
		t.Errorf("upstream got %q", tp)
	}
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// TestProxyAccessLog: a proxied request's line names the upstream and the
// target that served it and carries the ID sent upstream.
func TestProxyAccessLog(t *testing.T) {
	o := startOrigin(t, headerEcho)
	sink := &lockedBuffer{}
	alog, err := accesslog.Open(accesslog.Options{Writer: sink})
	if err != nil {
		t.Fatal(err)
	}
	so := observeOptions
	so.AccessLog = alog
	addr, _ := startProxy(t, UpstreamOptions{Name: "app", Targets: []string{o.addr}}, so)
	c := client(t)
	const n = 5
	ids := map[string]bool{}
	for i := 0; i < n; i++ {
		_, e := echoGet(t, c, addr, nil)
		ids[e.Header.Get("X-Request-Id")] = true
	}
	c.CloseIdleConnections()
	if err := alog.Close(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(sink.b.String(), "\n"), "\n")
	if len(lines) != n {
		t.Fatalf("%d lines, want %d: %s", len(lines), n, sink.b.String())
	}
	for _, line := range lines {
		var e map[string]any
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatal(err)
		}
		if e["upstream"] != "app" || e["target"] != o.addr || e["status"] != 200.0 || !ids[e["request_id"].(string)] {
			t.Errorf("line %s (target %s, ids %v)", line, o.addr, ids)
		}
	}
}

// TestProxyZeroAllocObserved: a warm proxied keep-alive request allocates
// nothing with metrics, the access log, request IDs and trace context on
// (the loop-proxy run proxies on the loop, the others on goroutines).
func TestProxyZeroAllocObserved(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	origin := server.New(server.Options{Handler: server.HandlerFunc(func(w *server.ResponseWriter, r *server.Request) {
		w.WriteString("ok\n")
	})})
	oaddr := servetest.Serve(t, origin, testEngine)
	alog, err := accesslog.Open(accesslog.Options{Writer: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	defer alog.Close()
	so := observeOptions
	so.AccessLog, so.Metrics = alog, metrics.NewSet()
	addr, _ := startProxy(t, UpstreamOptions{Targets: []string{oaddr}}, so)
	c := testnet.Dial(t, addr, testTimeout)
	req := []byte("GET /healthz HTTP/1.1\r\nHost: localhost\r\nUser-Agent: test\r\nTraceparent: " + clientTP + "\r\n\r\n")
	buf := make([]byte, 4096)
	var size int
	for range 20 {
		size = len(testnet.Exchange(t, c, req, buf))
	}
	allocs := testing.AllocsPerRun(200, func() {
		if _, err := c.Write(req); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(c, buf[:size]); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per observed proxied request, want 0", allocs)
	}
}

// TestProxyUpstreamLatency: with counting on, every answered request adds
// its time to response head to its target's histogram, on both proxy
// paths; with counting off, nothing is observed.
func TestProxyUpstreamLatency(t *testing.T) {
	o := startOrigin(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(2 * time.Millisecond) // a latency above the first bucket
		io.WriteString(w, "ok")
	}))
	for _, on := range []bool{true, false} {
		so := server.Options{}
		if on {
			so.Metrics = metrics.NewSet()
		}
		addr, up := startProxy(t, UpstreamOptions{Targets: []string{o.addr}}, so)
		c := client(t)
		const n = 5
		for i := 0; i < n; i++ {
			req, _ := http.NewRequest("GET", "http://"+addr+"/", nil)
			get(t, c, req)
		}
		lat := up.pool.Snapshot(nil)[0].Latency
		want := uint64(0)
		if on {
			want = n
		}
		if lat.Count() != want || on && (lat.Sum < n*2*time.Millisecond || lat.Buckets[0] != 0) {
			t.Errorf("counting %v: %d observed, sum %v, first bucket %d; want %d", on, lat.Count(), lat.Sum, lat.Buckets[0], want)
		}
	}
}

// TestRequestIDTemplate: {request_id} in a route's request_headers is the
// request's ID, the one forwarded upstream and returned to the client,
// also on the loop's proxy, which runs the route's policy before the
// request begins (a generated ID must not be made twice).
func TestRequestIDTemplate(t *testing.T) {
	o := startOrigin(t, headerEcho)
	up := newUpstream(t, UpstreamOptions{Targets: []string{o.addr}})
	strip, _ := rewrite.StripPrefix("/x")
	tab, err := router.New([]router.Route{{
		Policy:  &router.Policy{Path: strip, Request: fields(t, rewrite.RequestSide, [][2]string{{"X-Edge-Id", "id={request_id}"}}, nil)},
		Handler: New(up, Options{}),
	}})
	if err != nil {
		t.Fatal(err)
	}
	sink := &lockedBuffer{}
	alog, err := accesslog.Open(accesslog.Options{Writer: sink})
	if err != nil {
		t.Fatal(err)
	}
	opts := observeOptions
	opts.Handler, opts.LoopProxy, opts.AccessLog = router.NewSwitch(tab), testLoopProxy, alog
	s := server.New(opts)
	addr := servetest.Serve(t, s, testEngine)
	c := client(t)
	for _, in := range []string{"", "client-id-1", ""} { // generated, kept, generated on a pooled connection
		hdr := map[string][]string{}
		if in != "" {
			hdr["X-Request-Id"] = []string{in}
		}
		resp, e := echoGet(t, c, addr, hdr)
		id := resp.Header.Get("X-Request-Id")
		if id == "" || in != "" && id != in || e.Header.Get("X-Request-Id") != id || e.Header.Get("X-Edge-Id") != "id="+id {
			t.Errorf("sent %q: client got %q, upstream X-Request-Id %q X-Edge-Id %q", in, id, e.Header.Get("X-Request-Id"), e.Header.Get("X-Edge-Id"))
		}
	}
	// The access log records the target the client sent, not the
	// rewritten one (nginx's $request).
	s.Shutdown(context.Background())
	if err := alog.Close(); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSuffix(sink.b.String(), "\n"), "\n") {
		if !strings.Contains(line, `"path":"/x"`) {
			t.Errorf("access log line: %s", line)
		}
	}
}
