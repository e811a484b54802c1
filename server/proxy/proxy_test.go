package proxy

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/simdedge/simdedge/internal/testenv"
	"github.com/simdedge/simdedge/internal/testnet"
	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/access"
	"github.com/simdedge/simdedge/server/internal/servetest"
)

const testTimeout = 20 * time.Second

// origin is a real upstream server on 127.0.0.1:0 (net/http), counting the
// connections it accepted.
type origin struct {
	addr  string
	conns atomic.Int32
	srv   *http.Server
}

func startOrigin(t *testing.T, h http.Handler, configure ...func(*http.Server)) *origin {
	t.Helper()
	l := testnet.Listen(t)
	o := &origin{addr: l.Addr().String()}
	o.srv = &http.Server{Handler: h, ReadHeaderTimeout: testTimeout, ConnState: func(c net.Conn, s http.ConnState) {
		if s == http.StateNew {
			o.conns.Add(1)
		}
	}}
	for _, f := range configure {
		f(o.srv)
	}
	go o.srv.Serve(l)
	t.Cleanup(func() { o.srv.Close() })
	return o
}

// startProxy runs a server whose only handler proxies to targets.
func startProxy(t *testing.T, uo UpstreamOptions, so server.Options) (string, *Upstream) {
	t.Helper()
	return startProxyWith(t, uo, so, Options{})
}

// startProxyWith is startProxy with the proxy's options po.
func startProxyWith(t *testing.T, uo UpstreamOptions, so server.Options, po Options) (string, *Upstream) {
	t.Helper()
	up := newUpstream(t, uo)
	so.Handler = New(up, po)
	so.LoopProxy = testLoopProxy
	s := server.New(so)
	return servetest.Serve(t, s, testEngine), up
}

func client(t *testing.T) *http.Client {
	c := &http.Client{Timeout: testTimeout, Transport: &http.Transport{}}
	t.Cleanup(c.CloseIdleConnections)
	return c
}

// headerEcho answers with the request it received, as JSON.
var headerEcho = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Connection", "X-Resp-Hop")
	w.Header().Set("X-Resp-Hop", "must not pass")
	w.Header().Set("Keep-Alive", "timeout=5")
	json.NewEncoder(w).Encode(map[string]any{
		"method": r.Method, "uri": r.RequestURI, "host": r.Host, "header": r.Header, "body": string(b),
		"te": r.TransferEncoding, "cl": r.ContentLength,
	})
})

type echoed struct {
	Method, URI, Host, Body string
	Header                  http.Header
	TE                      []string
	CL                      int64
}

func get(t *testing.T, c *http.Client, req *http.Request) (*http.Response, []byte) {
	t.Helper()
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

// TestForwardHeaders: hop-by-hop removal, Via, and the X-Forwarded-*
// fields: from an untrusted peer X-Forwarded-For is replaced by the peer
// and -Host, -Proto, -Port rebuilt (a spoofed value never passes); from a
// trusted one (trusted_proxies) X-Forwarded-For is extended and the
// others kept as received.
func TestForwardHeaders(t *testing.T) {
	for _, trusted := range []bool{false, true} {
		t.Run(fmt.Sprintf("trusted=%v", trusted), func(t *testing.T) { testForwardHeaders(t, trusted) })
	}
}

func testForwardHeaders(t *testing.T, trusted bool) {
	testenv.CheckGoroutines(t)
	o := startOrigin(t, headerEcho)
	so := server.Options{}
	if trusted {
		so.TrustedProxies = access.NewPrefixes([]netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")})
	}
	addr, _ := startProxy(t, UpstreamOptions{Name: "app", Targets: []string{o.addr}}, so)
	_, port, _ := net.SplitHostPort(addr)
	c := client(t)
	req, _ := http.NewRequest("POST", "http://"+addr+"/p?q=1", strings.NewReader("payload"))
	req.Header.Set("Connection", "X-Hop, keep-alive")
	req.Header.Set("X-Hop", "secret")
	req.Header.Set("Keep-Alive", "timeout=5")
	req.Header.Set("TE", "trailers")
	req.Header.Set("Proxy-Connection", "keep-alive")
	req.Header.Set("Upgrade", "websocket")
	req.Header.Set("X-Forwarded-For", "203.0.113.9")
	req.Header.Set("X-Forwarded-Proto", "https") // spoofed unless trusted
	req.Header.Set("X-Forwarded-Host", "spoofed.example")
	req.Header.Set("X-Forwarded-Port", "1")
	req.Header.Set("Via", "1.0 other")
	req.Header.Set("X-Keep", "yes")
	resp, b := get(t, c, req)
	var e echoed
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	if e.Method != "POST" || e.URI != "/p?q=1" || e.Body != "payload" || e.Host != addr || e.CL != 7 {
		t.Errorf("forwarded %+v", e)
	}
	for _, h := range []string{"X-Hop", "Keep-Alive", "Te", "Proxy-Connection", "Upgrade", "Connection"} {
		if v := e.Header.Get(h); v != "" {
			t.Errorf("hop-by-hop %s forwarded: %q", h, v)
		}
	}
	want := [4]string{"127.0.0.1", "http", addr, port}
	if trusted {
		want = [4]string{"203.0.113.9, 127.0.0.1", "https", "spoofed.example", "1"}
	}
	for i, f := range []string{"X-Forwarded-For", "X-Forwarded-Proto", "X-Forwarded-Host", "X-Forwarded-Port"} {
		if got := e.Header.Values(f); len(got) != 1 || got[0] != want[i] {
			t.Errorf("%s %q, want %q", f, got, want[i])
		}
	}
	if got := e.Header.Get("Via"); got != "1.0 other, 1.1 simdedge" {
		t.Errorf("Via %q", got)
	}
	if e.Header.Get("X-Keep") != "yes" {
		t.Error("end-to-end field dropped")
	}
	if resp.Header.Get("X-Resp-Hop") != "" || resp.Header.Get("Keep-Alive") != "" {
		t.Errorf("response hop-by-hop fields passed: %v", resp.Header)
	}
	if resp.Header.Get("Via") != "1.1 simdedge" || resp.Header.Get("Content-Type") != "application/json" {
		t.Errorf("response fields %v", resp.Header)
	}
	if n := len(resp.Header.Values("Date")); n != 1 {
		t.Errorf("%d Date fields", n)
	}
}

func TestRoundRobinAndKeepAlive(t *testing.T) {
	testenv.CheckGoroutines(t)
	var hits [2]atomic.Int32
	mk := func(i int) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			hits[i].Add(1)
			fmt.Fprint(w, i)
		})
	}
	o0, o1 := startOrigin(t, mk(0)), startOrigin(t, mk(1))
	addr, _ := startProxy(t, UpstreamOptions{Targets: []string{o0.addr, o1.addr}}, server.Options{})
	c := client(t)
	for range 10 {
		req, _ := http.NewRequest("GET", "http://"+addr+"/", nil)
		get(t, c, req)
	}
	if hits[0].Load() != 5 || hits[1].Load() != 5 {
		t.Errorf("round robin: %d/%d", hits[0].Load(), hits[1].Load())
	}
	if o0.conns.Load() != 1 || o1.conns.Load() != 1 {
		t.Errorf("upstream connections %d/%d, want 1/1 (keep-alive pool)", o0.conns.Load(), o1.conns.Load())
	}
}

func TestChunkedUpstreamAndRequest(t *testing.T) {
	testenv.CheckGoroutines(t)
	o := startOrigin(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		for i := range 5 {
			fmt.Fprintf(w, "%d:%s;", i, b)
			w.(http.Flusher).Flush() // forces chunked framing
		}
	}))
	addr, _ := startProxy(t, UpstreamOptions{Targets: []string{o.addr}}, server.Options{})
	c := client(t)
	pr, pw := io.Pipe()
	go func() { io.WriteString(pw, "ab"); io.WriteString(pw, "c"); pw.Close() }()
	req, _ := http.NewRequest("POST", "http://"+addr+"/", pr)
	_, b := get(t, c, req)
	if string(b) != "0:abc;1:abc;2:abc;3:abc;4:abc;" {
		t.Errorf("got %q", b)
	}
}

// TestUpstreamDiesMidResponse: the client must see a truncated response
// (an error), never a complete-looking one.
func TestUpstreamDiesMidResponse(t *testing.T) {
	testenv.CheckGoroutines(t)
	for _, framing := range []string{"Content-Length: 100000", "Transfer-Encoding: chunked"} {
		o := startOrigin(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			conn, bw, _ := w.(http.Hijacker).Hijack()
			fmt.Fprintf(bw, "HTTP/1.1 200 OK\r\n%s\r\n\r\n", framing)
			if strings.HasPrefix(framing, "Transfer") {
				fmt.Fprintf(bw, "8000\r\n%s", strings.Repeat("x", 40000))
			} else {
				bw.WriteString(strings.Repeat("x", 40000))
			}
			bw.Flush()
			conn.Close()
		}))
		addr, _ := startProxy(t, UpstreamOptions{Targets: []string{o.addr}}, server.Options{})
		resp, err := client(t).Get("http://" + addr + "/")
		if err != nil {
			t.Fatalf("%s: %v", framing, err)
		}
		_, err = io.ReadAll(resp.Body)
		resp.Body.Close()
		// Either the failure came before anything reached the client
		// (502), or the client sees a truncated body: never a complete one.
		if resp.StatusCode != 502 && err == nil {
			t.Errorf("%s: truncated upstream body reached the client as complete (%d)", framing, resp.StatusCode)
		}
	}
}

func TestSlowUpstreamAndDeadTarget(t *testing.T) {
	testenv.CheckGoroutines(t)
	release := make(chan struct{})
	o := startOrigin(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-time.After(testTimeout):
		}
	}))
	defer close(release)
	addr, _ := startProxy(t, UpstreamOptions{Targets: []string{o.addr}, ResponseHeaderTimeout: 200 * time.Millisecond}, server.Options{})
	start := time.Now()
	resp, err := client(t).Get("http://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 504 || time.Since(start) > 5*time.Second {
		t.Errorf("slow upstream: %d after %v, want 504 after ~200ms", resp.StatusCode, time.Since(start))
	}
	// A target nobody listens on: the pool is down, 503 with
	// Retry-After (issue 19; it was 502 before the upstream policy).
	dead := testnet.RefusingAddr(t)
	addr2, _ := startProxy(t, UpstreamOptions{Targets: []string{dead}}, server.Options{})
	resp, err = client(t).Get("http://" + addr2 + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" {
		t.Errorf("dead target: %d (Retry-After %q), want 503 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
}

func TestMalformedUpstreamResponse(t *testing.T) {
	testenv.CheckGoroutines(t)
	for _, raw := range []string{
		"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab",
		"HTTP/1.1 200 OK\nX: y\n\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n0\r\n\r\n",
	} {
		o := startOrigin(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			conn, bw, _ := w.(http.Hijacker).Hijack()
			bw.WriteString(raw)
			bw.Flush()
			conn.Close()
		}))
		addr, _ := startProxy(t, UpstreamOptions{Targets: []string{o.addr}}, server.Options{})
		resp, err := client(t).Get("http://" + addr + "/")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 502 {
			t.Errorf("%q: status %d, want 502", raw, resp.StatusCode)
		}
	}
}

// TestStaleKeepAlive: the origin closes idle connections; the proxy must
// retry on a fresh connection instead of answering 502.
func TestStaleKeepAlive(t *testing.T) {
	testenv.CheckGoroutines(t)
	o := startOrigin(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }),
		func(s *http.Server) { s.IdleTimeout = 50 * time.Millisecond })
	addr, _ := startProxy(t, UpstreamOptions{Targets: []string{o.addr}}, server.Options{})
	c := client(t)
	for range 3 {
		req, _ := http.NewRequest("GET", "http://"+addr+"/", nil)
		resp, b := get(t, c, req)
		if resp.StatusCode != 200 || string(b) != "ok" {
			t.Fatalf("got %d %q", resp.StatusCode, b)
		}
		time.Sleep(150 * time.Millisecond)
	}
}

// TestRejectedNeverForwarded sends every strict-parsing rejection through
// the proxy: each gets a 4xx/5xx with a closed connection, and the origin
// never sees a connection.
func TestRejectedNeverForwarded(t *testing.T) {
	testenv.CheckGoroutines(t)
	o := startOrigin(t, headerEcho)
	addr, _ := startProxy(t, UpstreamOptions{Targets: []string{o.addr}},
		server.Options{Limits: server.Limits{MaxHeaderBytes: 4096, MaxHeaders: 10, MaxBodyBytes: 100, MaxRequestLine: 1024}})
	for _, tc := range rejected {
		c, err := net.DialTimeout("tcp", addr, testTimeout)
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(testTimeout))
		io.WriteString(c, tc.req)
		br := bufio.NewReader(c)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			c.Close()
			continue
		}
		io.Copy(io.Discard, resp.Body)
		if resp.StatusCode != tc.status || !resp.Close {
			t.Errorf("%s: %d close=%v, want %d and close", tc.name, resp.StatusCode, resp.Close, tc.status)
		}
		if _, err := br.ReadByte(); err == nil {
			t.Errorf("%s: connection left open", tc.name)
		}
		c.Close()
	}
	if n := o.conns.Load(); n != 0 {
		t.Errorf("origin saw %d connections; rejected requests were forwarded", n)
	}
}

var rejected = []struct {
	name   string
	req    string
	status int
}{
	{"bare LF", "GET / HTTP/1.1\nHost: x\n\n", 400},
	{"bare CR", "GET / HTTP/1.1\rHost: x\r\n\r\n", 400},
	{"obs-fold", "GET / HTTP/1.1\r\nHost: x\r\nX: a\r\n b\r\n\r\n", 400},
	{"space before colon", "GET / HTTP/1.1\r\nHost : x\r\n\r\n", 400},
	{"missing host", "GET / HTTP/1.1\r\n\r\n", 400},
	{"two hosts", "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400},
	{"CL and TE (smuggling)", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400},
	{"conflicting CL", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd", 400},
	{"bad CL", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 0x3\r\n\r\nabc", 400},
	{"chunked not final", "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, gzip\r\n\r\n", 400},
	{"TE obfuscated", "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: xchunked\r\n\r\n", 501},
	{"TE in 1.0", "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400},
	{"bad method", "G(T / HTTP/1.1\r\nHost: x\r\n\r\n", 400},
	{"bad target", "GET /a b HTTP/1.1\r\nHost: x\r\n\r\n", 400},
	{"bad version", "GET / HTTP/1.x\r\nHost: x\r\n\r\n", 400},
	{"HTTP/2.0", "GET / HTTP/2.0\r\nHost: x\r\n\r\n", 505},
	{"NUL in value", "GET / HTTP/1.1\r\nHost: x\r\nX: a\x00b\r\n\r\n", 400},
	{"bad header name", "GET / HTTP/1.1\r\nHost: x\r\nX(y: 1\r\n\r\n", 400},
	{"leading whitespace", "GET / HTTP/1.1\r\n Host: x\r\n\r\n", 400},
	{"request line too long", "GET /" + strings.Repeat("a", 2000) + " HTTP/1.1\r\nHost: x\r\n\r\n", 414},
	{"header too large", "GET / HTTP/1.1\r\nHost: x\r\nX: " + strings.Repeat("a", 5000) + "\r\n\r\n", 431},
	{"too many headers", "GET / HTTP/1.1\r\nHost: x\r\n" + strings.Repeat("X: 1\r\n", 11) + "\r\n", 431},
	{"body over limit", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 101\r\n\r\n", 413},
	{"bad request line", "GET /\r\nHost: x\r\n\r\n", 400},
	{"empty TE list", "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: ,\r\n\r\n", 400},
	// Chunked bodies are checked whole before forwarding (up to 64 KiB).
	{"bad chunk size", "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nab\r\n0\r\n\r\n", 400},
	{"chunk size overflow", "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" + strings.Repeat("f", 20) + "\r\n", 400},
	{"bad chunk extension", "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2;a b\r\nab\r\n0\r\n\r\n", 400},
	{"missing chunk CRLF", "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n0\r\n\r\n", 400},
	{"bad trailer", "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nBad Trailer\r\n\r\n", 400},
	{"chunk line too long", "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1;a=" + strings.Repeat("b", 5000) + "\r\n", 400},
	{"chunked body over limit", "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n65\r\n" + strings.Repeat("a", 101) + "\r\n0\r\n\r\n", 413},
	{"trailer too large", "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n" + strings.Repeat("T: "+strings.Repeat("v", 1000)+"\r\n", 20) + "\r\n", 431},
}

// TestHugeBodiesStreamBounded moves a large body each way through the proxy
// and checks that the heap stays bounded (nothing is buffered whole).
func TestHugeBodiesStreamBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	testenv.CheckGoroutines(t)
	size := int64(1 << 30)
	if raceEnabled {
		size = 64 << 20
	}
	var received atomic.Int64
	o := startOrigin(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == "POST" {
			n, _ := io.Copy(io.Discard, r.Body)
			received.Store(n)
			return
		}
		w.Header().Set("Content-Length", fmt.Sprint(size))
		buf := make([]byte, 64<<10)
		for n := int64(0); n < size; n += int64(len(buf)) {
			w.Write(buf[:min(int64(len(buf)), size-n)])
		}
	}))
	addr, _ := startProxy(t, UpstreamOptions{Targets: []string{o.addr}}, server.Options{Limits: server.Limits{MaxBodyBytes: -1}})
	stopSampling := sampleHeapPeak(20 * time.Millisecond)
	c := client(t)
	c.Timeout = 5 * time.Minute
	resp, err := c.Get("http://" + addr + "/big")
	if err != nil {
		t.Fatal(err)
	}
	n, err := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil || n != size {
		t.Fatalf("download: %d bytes, %v", n, err)
	}
	req, _ := http.NewRequest("POST", "http://"+addr+"/up", io.LimitReader(zeroReader{}, size))
	req.ContentLength = size
	resp, err = c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if received.Load() != size {
		t.Fatalf("upload: origin received %d of %d", received.Load(), size)
	}
	const bound = 64 << 20
	if p := stopSampling(); p > bound {
		t.Errorf("heap in use peaked at %d MiB moving %d MiB each way; want < %d MiB", p>>20, size>>20, bound>>20)
	}
}

// sampleHeapPeak reads the heap in use every interval, on a goroutine of
// its own, until the returned stop is called; stop waits for that
// goroutine and returns the highest value read.
func sampleHeapPeak(every time.Duration) (stop func() uint64) {
	var peak atomic.Uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var ms runtime.MemStats
		for {
			select {
			case <-done:
				return
			case <-time.After(every):
			}
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
		}
	}()
	return func() uint64 {
		close(done)
		wg.Wait()
		return peak.Load()
	}
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// newUpstream builds an upstream from uo and closes it at cleanup; made
// before the server that proxies to it, it closes after that server has
// shut down.
func newUpstream(t *testing.T, uo UpstreamOptions) *Upstream {
	t.Helper()
	up, err := NewUpstream(uo)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(up.Close)
	return up
}
