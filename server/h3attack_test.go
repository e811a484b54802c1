package server

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quic-go/quic-go"

	"github.com/simdedge/simdedge/internal/h3test"
	"github.com/simdedge/simdedge/server/accesslog"
	"github.com/simdedge/simdedge/server/metrics"
)

// h3StreamCode is the application error code a stream was reset with, or
// -1.
func h3StreamCode(err error) int64 {
	var se *quic.StreamError
	if errors.As(err, &se) {
		return int64(se.ErrorCode)
	}
	return -1
}

// TestH3Malformed: requests HTTP/1.1 could not have sent are refused
// with H3_MESSAGE_ERROR (RFC 9114 §4.1.2) by the checks HTTP/2 uses
// (h2map.go), a field section over the limit is answered 431, and the
// connection goes on serving.
func TestH3Malformed(t *testing.T) {
	_, p, addr := startH3(t, h3TestHandler(), Options{}, HTTP3Options{MaxHeaderBytes: 4 << 10})
	c := h3test.Dial(t, addr, h3RawTLS(p), nil)
	get := h3test.Get("GET", "/proto")
	cases := []struct {
		name   string
		fields []string
	}{
		{"authority and host differ", append(get, "host", "b.example")},
		{"uppercase name", append(get, "X-Big", "1")},
		{"connection field", append(get, "connection", "close")},
		{"no path", []string{":method", "GET", ":scheme", "https", ":authority", "a.example"}},
		{"absolute path", []string{":method", "GET", ":scheme", "https", ":authority", "a.example", ":path", "http://x/"}},
		{"space in method", []string{":method", "G T", ":scheme", "https", ":authority", "a.example", ":path", "/"}},
		{"bad host", []string{":method", "GET", ":scheme", "https", ":authority", "a@b", ":path", "/"}},
		{"pseudo after regular", append([]string{":method", "GET", "x", "1"}, get[2:]...)},
		{"two paths", append(get, ":path", "/b")},
		{"te other than trailers", append(get, "te", "gzip")},
	}
	for _, tc := range cases {
		status, _, err := h3test.Request(t, c, nil, tc.fields...)
		if code := h3StreamCode(err); code != h3MessageError {
			t.Errorf("%s: status %q err %v, want reset with H3_MESSAGE_ERROR", tc.name, status, err)
		}
	}
	status, body, err := h3test.Request(t, c, nil, append(get, "x-big", strings.Repeat("b", 5<<10))...)
	if err != nil || status != "431" || !strings.Contains(string(body), "Too Large") {
		t.Errorf("over MaxHeaderBytes: status %q %q err %v, want 431", status, body, err)
	}
	// A declared length the body does not match.
	status, _, err = h3test.Request(t, c, []byte("abc"), ":method", "POST", ":scheme", "https", ":authority", "a.example", ":path", "/echo", "content-length", "5")
	if h3StreamCode(err) != h3MessageError {
		t.Errorf("short body: status %q err %v, want H3_MESSAGE_ERROR", status, err)
	}
	status, body, err = h3test.Request(t, c, nil, get...)
	if err != nil || status != "200" || !strings.HasPrefix(string(body), "h3=true") {
		t.Fatalf("after the refusals: status %q body %q err %v", status, body, err)
	}
	// The host field alone is the authority, and the path is normalised.
	status, body, err = h3test.Request(t, c, nil, ":method", "GET", ":scheme", "https", ":path", "/a/../proto", "host", "c.example")
	if err != nil || status != "200" || !strings.HasSuffix(string(body), "host=c.example body=0") {
		t.Fatalf("host field: status %q body %q err %v", status, body, err)
	}
}

// blockHandler runs until the client goes (OnStreamGone) or release is
// closed, counting how many run at once.
type blockHandler struct {
	running, peak atomic.Int32
	started       chan struct{}
	release       chan struct{}
	gone          atomic.Int32
}

func newBlockHandler() *blockHandler {
	return &blockHandler{started: make(chan struct{}, 1000), release: make(chan struct{})}
}
func (h *blockHandler) ServeEdge(w *ResponseWriter, r *Request) {
	if string(r.Target()) != "/block" {
		w.WriteString("ok")
		return
	}
	n := h.running.Add(1)
	defer h.running.Add(-1)
	for {
		p := h.peak.Load()
		if n <= p || h.peak.CompareAndSwap(p, n) {
			break
		}
	}
	gone := make(chan struct{})
	r.OnStreamGone(func() { close(gone) })
	h.started <- struct{}{}
	select {
	case <-gone:
		h.gone.Add(1)
	case <-h.release:
		w.WriteString("released")
	case <-time.After(testTimeout):
	}
}

// TestH3StreamLimit: a client may have MaxStreams requests open and no
// more (QUIC's MAX_STREAMS); a flood of streams opened and reset at once
// never runs more than MaxStreams handlers; another client is served
// meanwhile, and the flooding connection afterwards.
func TestH3StreamLimit(t *testing.T) {
	const limit = 4
	h := newBlockHandler()
	_, p, addr := startH3(t, h, Options{}, HTTP3Options{MaxStreams: limit})
	dial := func() *quic.Conn { return h3test.Dial(t, addr, h3RawTLS(p), nil) }
	h3test.StreamLimit(t, dial(), dial, limit, h.started, &h.peak, testTimeout)
}

// TestH3StreamReset: a client that resets its request stream mid-body
// fails the handler's body read; one that stops reading the response
// runs the handler's OnStreamGone.
func TestH3StreamReset(t *testing.T) {
	readErr := make(chan error, 1)
	h := newBlockHandler()
	handler := HandlerFunc(func(w *ResponseWriter, r *Request) {
		if string(r.Target()) == "/upload" {
			_, err := io.Copy(io.Discard, r.Body())
			readErr <- err
			return
		}
		h.ServeEdge(w, r)
	})
	_, p, addr := startH3(t, handler, Options{}, HTTP3Options{})
	c := h3test.Dial(t, addr, h3RawTLS(p), nil)
	st, err := c.OpenStream()
	if err != nil {
		t.Fatal(err)
	}
	st.Write(h3test.Headers(":method", "POST", ":scheme", "https", ":authority", "a.example", ":path", "/upload"))
	st.Write(h3test.Data(bytes.Repeat([]byte("x"), 10000)))
	time.Sleep(10 * time.Millisecond)
	st.CancelWrite(h3RequestCancelled)
	select {
	case err := <-readErr:
		if err == nil {
			t.Fatal("the handler read a reset body to its end")
		}
	case <-time.After(testTimeout):
		t.Fatal("the handler's body read did not fail")
	}
	st2, err := c.OpenStream()
	if err != nil {
		t.Fatal(err)
	}
	st2.Write(h3test.Headers(h3test.Get("GET", "/block")...))
	st2.Close()
	<-h.started
	st2.CancelRead(h3RequestCancelled)
	deadline := time.Now().Add(testTimeout)
	for h.gone.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if h.gone.Load() != 1 {
		t.Fatal("OnStreamGone did not run after the client stopped reading")
	}
}

// TestH3ClientGone: a client that disappears mid-request (its connection
// closed while the handler waits and while it uploads) leaves the server
// healthy: the handlers end, a new client is served, and no goroutine is
// left (startH3 checks).
func TestH3ClientGone(t *testing.T) {
	h := newBlockHandler()
	_, p, addr := startH3(t, h, Options{}, HTTP3Options{})
	c := h3test.Dial(t, addr, h3RawTLS(p), nil)
	st, _ := c.OpenStream()
	st.Write(h3test.Headers(h3test.Get("GET", "/block")...))
	st.Close()
	<-h.started
	up, _ := c.OpenStream()
	up.Write(h3test.Headers(":method", "POST", ":scheme", "https", ":authority", "a.example", ":path", "/echo", "content-length", "100000"))
	up.Write(h3test.Data(make([]byte, 5000)))
	time.Sleep(10 * time.Millisecond)
	c.CloseWithError(0, "gone")
	deadline := time.Now().Add(testTimeout)
	for h.gone.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if h.gone.Load() != 1 {
		t.Fatal("the waiting handler did not see its client go")
	}
	c2, _ := h3Client(t, p)
	resp, b := h3Do(t, c2, "GET", "https://"+addr+"/", nil)
	if resp.StatusCode != 200 || string(b) != "ok" {
		t.Fatalf("new client: %d %q", resp.StatusCode, b)
	}
}

// TestH3Observed: HTTP/3 requests get request IDs and access-log lines
// with proto HTTP/3.0 and the TLS version, and the listener counts the
// connection, its streams and a refused stream.
func TestH3Observed(t *testing.T) {
	sink := &lockedBuffer{}
	alog, err := accesslog.Open(accesslog.Options{Writer: sink})
	if err != nil {
		t.Fatal(err)
	}
	set := metrics.NewSet()
	h := HandlerFunc(func(w *ResponseWriter, r *Request) { w.WriteString("id=" + string(r.RequestID())) })
	_, p, addr := startH3(t, h, Options{AccessLog: alog, Metrics: set, RequestID: RequestIDOptions{Header: "X-Request-Id", Generate: true}}, HTTP3Options{})
	c := h3test.Dial(t, addr, h3RawTLS(p), nil)
	const n = 3
	for i := range n {
		if status, body, err := h3test.Request(t, c, nil, h3test.Get("GET", "/s")...); status != "200" || !strings.HasPrefix(string(body), "id=") {
			t.Fatalf("request %d: %q %q %v", i, status, body, err)
		}
	}
	h3test.Request(t, c, nil, append(h3test.Get("GET", "/s"), "Bad", "1")...)
	c.CloseWithError(0, "")
	var h3 [metrics.H3Kinds]uint64
	deadline := time.Now().Add(testTimeout)
	for h3[metrics.H3Conn] == 0 && time.Now().Before(deadline) {
		for _, l := range set.Listeners() {
			h3 = l.Totals().HTTP3
		}
		time.Sleep(5 * time.Millisecond)
	}
	if h3[metrics.H3Conn] != 1 || h3[metrics.H3Stream] != n || h3[metrics.H3Error] != 1 {
		t.Errorf("HTTP/3 counts %v, want 1 connection, %d streams, 1 error", h3, n)
	}
	if err := alog.Close(); err != nil {
		t.Fatal(err)
	}
	lines, es := sink.jsonLines(t, n)
	for i, e := range es {
		line := lines[i]
		if e["proto"] != "HTTP/3.0" || e["status"] != 200.0 || e["request_id"] == "" || e["tls"] != "TLS1.3" {
			t.Errorf("line %d: %s", i, line)
		}
	}
}
