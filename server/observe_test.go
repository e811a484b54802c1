package server

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/simdedge/simdedge/server/accesslog"
	"github.com/simdedge/simdedge/server/metrics"
	"github.com/simdedge/simdedge/server/trace"
)

// idEcho answers with the request's ID in the body, and sets a field of
// the ID's name itself (which the server replaces).
var idEcho = HandlerFunc(func(w *ResponseWriter, r *Request) {
	w.AddHeader("X-Request-Id", "from-handler")
	w.Write(r.RequestID())
})

func ridRequest(t *testing.T, c *http.Client, addr, id string) (header []string, body string) {
	t.Helper()
	req, _ := http.NewRequest("GET", "http://"+addr+"/", nil)
	if id != "" {
		req.Header.Set("X-Request-Id", id)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.Header.Values("X-Request-Id"), string(b)
}

// TestRequestID: a valid client ID is kept; a missing, too long or
// badly formed one is replaced by a generated one, unique per request; the
// response carries it once, replacing the handler's own field.
func TestRequestID(t *testing.T) {
	_, addr := startTCP(t, idEcho, Options{RequestID: RequestIDOptions{Header: "X-Request-Id", Generate: true}})
	c := newClient()
	defer closeIdle(t, c)
	h, body := ridRequest(t, c, addr, "client-id-1")
	if len(h) != 1 || h[0] != "client-id-1" || body != "client-id-1" {
		t.Errorf("valid ID: header %q, handler saw %q", h, body)
	}
	seen := map[string]bool{}
	for _, bad := range []string{"", strings.Repeat("a", trace.MaxRequestID+1), "a b", "a\"b", "a;b"} {
		h, body := ridRequest(t, c, addr, bad)
		if len(h) != 1 || h[0] != body || !trace.ValidRequestID([]byte(body)) || body == bad || seen[body] {
			t.Errorf("ID %q: header %q, handler saw %q", bad, h, body)
		}
		seen[body] = true
	}
}

// TestRequestIDNotGenerated: without Generate, a request without an ID
// has none, and the handler's own field passes.
func TestRequestIDNotGenerated(t *testing.T) {
	_, addr := startTCP(t, idEcho, Options{RequestID: RequestIDOptions{Header: "X-Request-Id"}})
	c := newClient()
	defer closeIdle(t, c)
	if h, body := ridRequest(t, c, addr, ""); len(h) != 1 || h[0] != "from-handler" || body != "" {
		t.Errorf("header %q, handler saw %q", h, body)
	}
	if h, body := ridRequest(t, c, addr, "ok-1"); len(h) != 1 || h[0] != "ok-1" || body != "ok-1" {
		t.Errorf("header %q, handler saw %q", h, body)
	}
}

// lockedBuffer is a goroutine-safe access-log sink.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// jsonLines is the access log written to l: its lines and each parsed
// as a JSON object. The test fails unless there are n.
func (l *lockedBuffer) jsonLines(t *testing.T, n int) ([]string, []map[string]any) {
	t.Helper()
	l.mu.Lock()
	text := l.b.String()
	l.mu.Unlock()
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if len(lines) != n {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), n, text)
	}
	es := make([]map[string]any, n)
	for i, line := range lines {
		if err := json.Unmarshal([]byte(line), &es[i]); err != nil {
			t.Fatalf("line %d: %v: %s", i, err, line)
		}
	}
	return lines, es
}

// TestAccessLog: one JSON line per request with its fields, on every
// engine; a 404 counts as unmatched.
func TestAccessLog(t *testing.T) {
	sink := &lockedBuffer{}
	alog, err := accesslog.Open(accesslog.Options{Writer: sink})
	if err != nil {
		t.Fatal(err)
	}
	set := metrics.NewSet()
	rt := set.Route("r1")
	hit := &Plan{Metrics: rt, Action: HandlerFunc(func(w *ResponseWriter, r *Request) { w.WriteString("hello") })}
	miss := &Plan{Action: HandlerFunc(func(w *ResponseWriter, r *Request) { w.WriteHeader(404) })}
	h := routerFunc(func(r *Request) *Plan {
		if string(r.Target()) == "/missing" {
			return miss
		}
		return hit
	})
	s, addr := startTCP(t, h, Options{AccessLog: alog, Metrics: set, RequestID: RequestIDOptions{Header: "X-Request-Id", Generate: true}})
	c := dial(t, addr)
	br := bufio.NewReader(c)
	const n = 50
	for i := 0; i < n; i++ {
		path := "/p?i=1"
		if i == n-1 {
			path = "/missing"
		}
		c.Write([]byte("GET " + path + " HTTP/1.1\r\nHost: h.example\r\nUser-Agent: ua\"x\r\nX-Request-Id: id-" + strings.Repeat("z", i%3+1) + "\r\n\r\n"))
		readResponse(t, br, "GET")
	}
	c.Close()
	_ = s
	if err := alog.Close(); err != nil { // flushes every shard
		t.Fatal(err)
	}
	_, es := sink.jsonLines(t, n)
	for i, e := range es {
		want := map[string]any{"method": "GET", "host": "h.example", "path": "/p?i=1", "proto": "HTTP/1.1",
			"status": 200.0, "bytes_out": 5.0, "route": "r1", "user_agent": "ua\"x", "remote": "127.0.0.1",
			"request_id": "id-" + strings.Repeat("z", i%3+1)}
		if i == n-1 {
			want["path"], want["status"], want["bytes_out"], want["route"] = "/missing", 404.0, 0.0, metrics.UnmatchedRoute
		}
		for k, v := range want {
			if e[k] != v {
				t.Errorf("line %d: %s = %v, want %v", i, k, e[k], v)
			}
		}
		if d, _ := e["duration"].(float64); d < 0 || d > 60 {
			t.Errorf("line %d: duration %v", i, e["duration"])
		}
	}
}

// TestZeroAllocObserved: a warm keep-alive request allocates nothing with
// metrics, a JSON access log and generated request IDs on.
func TestZeroAllocObserved(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	alog, err := accesslog.Open(accesslog.Options{Writer: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	defer alog.Close()
	set := metrics.NewSet()
	rt := set.Route("health")
	h := routed(rt, HandlerFunc(func(w *ResponseWriter, r *Request) {
		w.AddHeader("Content-Type", "text/plain")
		w.WriteString("ok\n")
	}))
	_, addr := startTCP(t, h, Options{Metrics: set, AccessLog: alog,
		RequestID: RequestIDOptions{Header: "X-Request-Id", Generate: true}})
	if allocs := keepAliveAllocs(t, addr); allocs != 0 {
		t.Errorf("%v allocations per request with metrics and access log on, want 0", allocs)
	}
}

// TestRequestIDClone: a clone keeps its own copy of the ID.
func TestRequestIDClone(t *testing.T) {
	got := make(chan string, 1)
	h := HandlerFunc(func(w *ResponseWriter, r *Request) {
		cl := r.Clone()
		w.WriteString("x")
		got <- string(cl.RequestID())
	})
	_, addr := startTCP(t, h, Options{RequestID: RequestIDOptions{Header: "X-Request-Id"}})
	c := newClient()
	defer closeIdle(t, c)
	ridRequest(t, c, addr, "clone-1")
	if id := <-got; id != "clone-1" {
		t.Errorf("clone's ID %q", id)
	}
}

// TestMessageObserved: a request over a message transport gets a request
// ID in its reply and an access-log line.
func TestMessageObserved(t *testing.T) {
	sink := &lockedBuffer{}
	alog, err := accesslog.Open(accesslog.Options{Writer: sink})
	if err != nil {
		t.Fatal(err)
	}
	s := New(Options{Handler: idEcho, AccessLog: alog, RequestID: RequestIDOptions{Header: "X-Request-Id", Generate: true}})
	l := newMemMessages(0)
	go s.ServeMessages(l)
	defer s.Close()
	replies, err := l.Exchange([]byte("GET /m HTTP/1.1\r\nHost: example\r\n\r\n"))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(bytes.Join(replies, nil))), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	id := resp.Header.Values("X-Request-Id")
	if len(id) != 1 || id[0] != string(b) || !trace.ValidRequestID(b) {
		t.Errorf("reply ID %q, handler saw %q", id, b)
	}
	if err := alog.Close(); err != nil {
		t.Fatal(err)
	}
	var e map[string]any
	if err := json.Unmarshal(sink.b.Bytes(), &e); err != nil || e["path"] != "/m" || e["request_id"] != string(b) || e["status"] != 200.0 {
		t.Errorf("log %q (%v)", sink.b.String(), err)
	}
}

// TestH2Observed: HTTP/2 streams get request IDs (returned in the
// response) and one access-log line each, with proto HTTP/2.0, for inline
// and goroutine handlers alike.
func TestH2Observed(t *testing.T) {
	sink := &lockedBuffer{}
	alog, err := accesslog.Open(accesslog.Options{Writer: sink})
	if err != nil {
		t.Fatal(err)
	}
	h := HandlerFunc(func(w *ResponseWriter, r *Request) {
		w.WriteString("id=" + string(r.RequestID()))
	})
	set := metrics.NewSet()
	_, addr := startH2C(t, h, Options{AccessLog: alog, Metrics: set, RequestID: RequestIDOptions{Header: "X-Request-Id", Generate: true}})
	c := h2cClient()
	const n = 5
	ids := map[string]bool{}
	for i := 0; i < n; i++ {
		resp, body := h2Get(t, c, "http://"+addr+"/s")
		id := resp.Header.Get("X-Request-Id")
		if resp.ProtoMajor != 2 || id == "" || body != "id="+id || ids[id] {
			t.Fatalf("stream %d: proto %d, X-Request-Id %q, body %q (ids so far %v)", i, resp.ProtoMajor, id, body, ids)
		}
		ids[id] = true
	}
	c.CloseIdleConnections()
	if err := alog.Close(); err != nil {
		t.Fatal(err)
	}
	// The listener counts the HTTP/2 connection and its streams, and the
	// requests carry its label slot.
	var h2 [metrics.H2Kinds]uint64
	for _, l := range set.Listeners() {
		h2 = l.Totals().HTTP2
	}
	if h2[metrics.H2Conn] != 1 || h2[metrics.H2Stream] != n || h2[metrics.H2Reset] != 0 {
		t.Errorf("HTTP/2 counts %v, want 1 connection and %d streams", h2, n)
	}
	lines, es := sink.jsonLines(t, n)
	for i, e := range es {
		line := lines[i]
		if id, _ := e["request_id"].(string); e["proto"] != "HTTP/2.0" || e["status"] != 200.0 || !ids[id] {
			t.Errorf("line %d: %s", i, line)
		}
	}
}
