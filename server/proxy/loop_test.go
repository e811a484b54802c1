//go:build linux

package proxy

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/simdedge/simdedge/internal/testenv"
	"github.com/simdedge/simdedge/internal/testnet"
	phttp "github.com/simdedge/simdedge/parse/http"
	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/internal/servetest"
)

// Tests of the proxy on the event loop itself (server.Options.LoopProxy).
// The whole suite also runs on it (the "loop-proxy" run); these cover what
// only the loop does. They run once, in that run.

func needLoopProxyRun(t *testing.T) {
	t.Helper()
	if !testLoopProxy {
		t.Skip("loop-proxy tests run in the loop-proxy pass")
	}
}

// loopMux proxies everything except /inline/..., answered inline with the
// path: a table of both kinds of routes, as router.Table is.
type loopMux struct{ p *Proxy }

var inlineAnswer = server.Inline(server.HandlerFunc(func(w *server.ResponseWriter, r *server.Request) {
	w.WriteString("inline " + string(r.Target()))
}))

func isInline(r *server.Request) bool { return bytes.HasPrefix(r.Target(), []byte("/inline/")) }

func (m loopMux) ServeEdge(w *server.ResponseWriter, r *server.Request) {
	if isInline(r) {
		inlineAnswer.ServeEdge(w, r)
		return
	}
	m.p.ServeEdge(w, r)
}

func (m loopMux) InlineHandler(r *server.Request) server.Handler {
	if isInline(r) {
		return inlineAnswer
	}
	return nil
}

func (m loopMux) LoopProxy(r *server.Request) server.LoopUpstream {
	if isInline(r) {
		return nil
	}
	return m.p.LoopProxy(r)
}

// startLoopProxy serves loopMux over up on the loop engine with LoopProxy
// on; stop shuts it down (also at cleanup).
func startLoopProxy(t *testing.T, uo UpstreamOptions, so server.Options) (addr string, up *Upstream, stop func()) {
	t.Helper()
	r := serveLoopProxy(t, uo, so)
	return r.l.Addr().String(), r.up, r.stop
}

// loopProxyRun is a server that serveLoopProxy started, for the tests that
// need its listener or server too.
type loopProxyRun struct {
	s    *server.Server
	l    net.Listener
	up   *Upstream
	stop func()
}

// serveLoopProxy is startLoopProxy's server, listener and upstream.
func serveLoopProxy(t *testing.T, uo UpstreamOptions, so server.Options) *loopProxyRun {
	t.Helper()
	up, err := NewUpstream(uo)
	if err != nil {
		t.Fatal(err)
	}
	so.Handler = loopMux{New(up, Options{})}
	so.LoopProxy = true
	r := &loopProxyRun{s: server.New(so), l: testnet.Listen(t), up: up}
	done := make(chan struct{})
	go func() { r.s.ServeTCP(r.l, server.EngineLoop); close(done) }()
	var once sync.Once
	r.stop = func() {
		once.Do(func() {
			ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
			defer cancel()
			r.s.Shutdown(ctx)
			<-done
			up.Close()
		})
	}
	t.Cleanup(r.stop)
	return r
}

// pooledOnGoroutines counts the idle connections of the goroutine proxy's
// own pools: on the loop path they stay empty (the loop has its own).
func pooledOnGoroutines(up *Upstream) int {
	n := 0
	for _, t := range up.targets {
		t.mu.Lock()
		n += len(t.idle)
		t.mu.Unlock()
	}
	return n
}

// pathOrigin answers "origin <path>".
func pathOrigin(t *testing.T) *origin {
	return startOrigin(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "origin "+r.URL.Path)
	}))
}

// mixedPipeline returns n GET requests, every third one (from the second)
// for /inline/ and the rest for /p/, with the bodies the loop tests'
// handlers answer them with: "inline <path>", or "origin <path>" and
// suffix.
func mixedPipeline(n int, suffix string) (reqs, want []string) {
	reqs, want = make([]string, n), make([]string, n)
	for i := range n {
		path := fmt.Sprintf("/p/%d", i)
		want[i] = "origin " + path + suffix
		if i%3 == 1 {
			path = fmt.Sprintf("/inline/%d", i)
			want[i] = "inline " + path
		}
		reqs[i] = "GET " + path + " HTTP/1.1\r\nHost: x\r\n\r\n"
	}
	return reqs, want
}

// TestLoopProxyPipelined: pipelined requests, proxied and inline mixed,
// are answered in order, over one upstream keep-alive connection.
func TestLoopProxyPipelined(t *testing.T) {
	needLoopProxyRun(t)
	testenv.CheckGoroutines(t)
	o := pathOrigin(t)
	addr, up, _ := startLoopProxy(t, UpstreamOptions{Targets: []string{o.addr}}, server.Options{})
	c := testnet.Dial(t, addr, testTimeout)
	const n = 60
	reqs, want := mixedPipeline(n, "")
	br := bufio.NewReader(c)
	for i, r := range testnet.Pipeline(t, c, br, reqs) {
		if r.Status != 200 || r.Body != want[i] {
			t.Fatalf("response %d: %d %q, want %q", i, r.Status, r.Body, want[i])
		}
	}
	if got := o.conns.Load(); got != 1 {
		t.Errorf("origin saw %d connections for %d sequential exchanges, want 1 (keep-alive)", got, n)
	}
	if p := pooledOnGoroutines(up); p != 0 {
		t.Errorf("%d connections in the goroutine proxy's pool: the requests did not run on the loop", p)
	}
}

// TestLoopProxyKeepAlive: concurrent clients share the loop's upstream
// connections; the origin sees no more connections than clients.
func TestLoopProxyKeepAlive(t *testing.T) {
	needLoopProxyRun(t)
	testenv.CheckGoroutines(t)
	o := pathOrigin(t)
	addr, _, _ := startLoopProxy(t, UpstreamOptions{Targets: []string{o.addr}}, server.Options{})
	const clients, each = 8, 50
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}, Timeout: testTimeout}
			defer c.CloseIdleConnections()
			for j := range each {
				path := fmt.Sprintf("/c%d/%d", i, j)
				resp, err := c.Get("http://" + addr + path)
				if err != nil {
					errs <- err
					return
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if string(b) != "origin "+path {
					errs <- fmt.Errorf("%s: got %d %q", path, resp.StatusCode, b)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if got := o.conns.Load(); got < 1 || got > clients {
		t.Errorf("origin saw %d connections for %d clients x %d requests, want 1-%d", got, clients, each, clients)
	}
}

// flakyOrigin answers the first request of each connection with keep-alive,
// then closes the connection when the next request arrives, unanswered:
// a pooled connection the upstream dropped between requests, which the
// loop cannot see coming (the close follows the request).
func flakyOrigin(t *testing.T) (addr string, dropped *atomic.Int32) {
	t.Helper()
	dropped = new(atomic.Int32)
	addr = rawOrigin(t, func(c net.Conn, i int, req *http.Request) bool {
		if i > 0 {
			dropped.Add(1)
			return false
		}
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nfresh")
		return true
	})
	return addr, dropped
}

// rawOrigin serves loopback connections in goroutines: it reads each
// request (body discarded) and calls answer with the request's index on its
// connection; the connection closes when answer returns false, at the
// first read error, or after testTimeout. The test's cleanup closes the
// listener and waits for every connection.
func rawOrigin(t *testing.T, answer func(c net.Conn, i int, req *http.Request) bool) string {
	t.Helper()
	l := testnet.Listen(t)
	var wg sync.WaitGroup
	t.Cleanup(func() { l.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				c.SetDeadline(time.Now().Add(testTimeout))
				br := bufio.NewReader(c)
				for i := 0; ; i++ {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					io.Copy(io.Discard, req.Body)
					if !answer(c, i, req) {
						return
					}
				}
			}()
		}
	}()
	return l.Addr().String()
}

// TestLoopProxyStaleRetry: a pooled connection that fails before any
// response byte is replaced and the request resent, as on goroutines.
func TestLoopProxyStaleRetry(t *testing.T) {
	needLoopProxyRun(t)
	testenv.CheckGoroutines(t)
	oaddr, dropped := flakyOrigin(t)
	addr, _, stop := startLoopProxy(t, UpstreamOptions{Targets: []string{oaddr}}, server.Options{})
	c := client(t)
	for i := range 20 {
		method := "GET"
		if i%2 == 1 {
			method = "DELETE"
		}
		req, _ := http.NewRequest(method, "http://"+addr+"/", nil)
		resp, b := get(t, c, req)
		if resp.StatusCode != 200 || string(b) != "fresh" {
			t.Fatalf("request %d: %d %q", i, resp.StatusCode, b)
		}
	}
	c.CloseIdleConnections()
	stop()
	if dropped.Load() == 0 {
		t.Error("no pooled connection was dropped by the origin: the retry was not exercised")
	}
}

// TestLoopProxyBackPressure: a client that stops reading a big response
// stops the upstream reads; memory stays bounded and the response arrives
// whole once the client reads again.
func TestLoopProxyBackPressure(t *testing.T) {
	needLoopProxyRun(t)
	testenv.CheckGoroutines(t)
	size := int64(256 << 20)
	if raceEnabled {
		size = 64 << 20
	}
	var sent atomic.Int64
	o := startOrigin(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", fmt.Sprint(size))
		buf := make([]byte, 64<<10)
		for n := int64(0); n < size; n += int64(len(buf)) {
			k, err := w.Write(buf[:min(int64(len(buf)), size-n)])
			sent.Add(int64(k))
			if err != nil {
				return
			}
		}
	}))
	addr, _, _ := startLoopProxy(t, UpstreamOptions{Targets: []string{o.addr}}, server.Options{})
	c := testnet.Dial(t, addr, 2*testTimeout)
	io.WriteString(c, "GET /big HTTP/1.1\r\nHost: x\r\n\r\n")
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapInuse
	// Stall: the kernel buffers fill, then the loop must stop reading
	// the upstream (the origin's writes block). Without back-pressure the
	// loop would move the whole body into memory meanwhile.
	var peak uint64
	for range 25 {
		time.Sleep(20 * time.Millisecond)
		runtime.ReadMemStats(&ms)
		peak = max(peak, ms.HeapInuse)
	}
	stalled := sent.Load()
	if stalled >= size/2 {
		t.Fatalf("origin sent %d MiB of %d while the client read nothing: no back-pressure", stalled>>20, size>>20)
	}
	if grew := int64(peak) - int64(base); grew > 16<<20 {
		t.Errorf("heap grew %d MiB while the client stalled", grew>>20)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	n, err := io.Copy(io.Discard, resp.Body)
	if err != nil || n != size {
		t.Fatalf("got %d of %d bytes: %v", n, size, err)
	}
}

// TestLoopProxyNoFDLeak: 1000 requests while the origin restarts every 100
// (its pooled connections die) leave no descriptor behind, and every
// request is answered (stale connections are retried).
func TestLoopProxyNoFDLeak(t *testing.T) {
	needLoopProxyRun(t)
	testenv.CheckGoroutines(t)
	l := testnet.Listen(t)
	oaddr := l.Addr().String()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	serve := func(l net.Listener) *http.Server {
		s := &http.Server{Handler: h, ReadHeaderTimeout: testTimeout}
		go s.Serve(l)
		return s
	}
	before := testenv.OpenFDs(t)
	osrv := serve(l)
	addr, _, stop := startLoopProxy(t, UpstreamOptions{Targets: []string{oaddr}}, server.Options{})
	c := client(t)
	codes := map[int]int{}
	for i := range 1000 {
		if i > 0 && i%100 == 0 {
			osrv.Close()
			l, err := net.Listen("tcp", oaddr)
			if err != nil {
				t.Fatal(err)
			}
			osrv = serve(l)
		}
		req, _ := http.NewRequest("GET", "http://"+addr+"/", nil)
		resp, _ := get(t, c, req)
		codes[resp.StatusCode]++
	}
	if codes[200] != 1000 {
		t.Errorf("status counts %v, want 1000 x 200", codes)
	}
	if during := testenv.OpenFDs(t); during > before+20 {
		t.Errorf("%d descriptors open after 1000 requests, %d before", during, before)
	}
	c.CloseIdleConnections()
	stop()
	osrv.Close()
	var after int
	for range 100 {
		if after = testenv.OpenFDs(t); after <= before {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if after > before {
		t.Errorf("%d descriptors open after the test, %d before", after, before)
	}
}

// cannedOrigin answers each connection's requests by path with fixed
// bytes, written in pieces (a pause between them makes the proxy see
// them in separate reads), then closes when the piece list says so.
func cannedOrigin(t *testing.T) string {
	t.Helper()
	canned := map[string][]string{
		"/cl":        {"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-A: 1\r\nConnection: X-A\r\nKeep-Alive: timeout=5\r\nX-Keep: y\r\n\r\nhello"},
		"/split":     {"HTTP/1.1 200 OK\r\nContent-", "Length: 11\r\n\r\nhello", " world"},
		"/chunked":   {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel", "lo\r\n6\r\n world\r\n", "0\r\nX-Trailer: t\r\n\r\n"},
		"/close":     {"HTTP/1.0 200 OK\r\nX-B: 2\r\n\r\nuntil ", "close", ""},
		"/interim":   {"HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"},
		"/bad":       {"HTTP/1.1 2000 OK\r\n\r\n"},
		"/die":       {"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npartial", ""},
		"/diechunk":  {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n", ""},
		"/nocontent": {"HTTP/1.1 204 No Content\r\nX-C: 3\r\n\r\n"},
		"/via":       {"HTTP/1.1 200 OK\r\nVia: 1.1 origin\r\nContent-Length: 0\r\n\r\n"},
		"/upgrade":   {"HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\nConnection: upgrade\r\n\r\n"},
	}
	return rawOrigin(t, func(c net.Conn, _ int, req *http.Request) bool {
		pieces := canned[req.URL.Path]
		for i, p := range pieces {
			if i > 0 {
				time.Sleep(10 * time.Millisecond)
			}
			if p == "" && i == len(pieces)-1 {
				return false // close here
			}
			io.WriteString(c, p)
		}
		return len(pieces) > 0
	})
}

// exchangeBytes sends raw through the proxy at addr and returns what came
// back until the connection closed, with the Date line removed.
func exchangeBytes(t *testing.T, addr, raw string) string {
	t.Helper()
	c := testnet.Dial(t, addr, testTimeout)
	defer c.Close() // closed on return: callers make many
	io.WriteString(c, raw)
	b, _ := io.ReadAll(c)
	var out []string
	for _, line := range bytes.SplitAfter(b, []byte("\r\n")) {
		if !bytes.HasPrefix(line, []byte("Date: ")) {
			out = append(out, string(line))
		}
	}
	return fmt.Sprint(out)
}

// TestLoopProxyMatchesGoroutine: for each canned upstream behaviour (split
// heads, chunked bodies with trailers, bodies until close, interim
// responses, malformed heads, death mid-body, 204, 101, hop-by-hop and Via
// fields), the client receives the same bytes from the loop proxy as from
// the goroutine proxy, for GET and HEAD, pipelined after an inline request.
func TestLoopProxyMatchesGoroutine(t *testing.T) {
	needLoopProxyRun(t)
	testenv.CheckGoroutines(t)
	oaddr := cannedOrigin(t)
	loopAddr, up, _ := startLoopProxy(t, UpstreamOptions{Targets: []string{oaddr}}, server.Options{})
	gup := newUpstream(t, UpstreamOptions{Targets: []string{oaddr}})
	gs := server.New(server.Options{Handler: loopMux{New(gup, Options{})}})
	glAddr := servetest.Serve(t, gs, server.EngineGoroutine)
	for _, path := range []string{"/cl", "/split", "/chunked", "/close", "/interim", "/bad", "/die", "/diechunk", "/nocontent", "/via", "/upgrade"} {
		for _, method := range []string{"GET", "HEAD"} {
			raw := "GET /inline/x HTTP/1.1\r\nHost: h\r\n\r\n" +
				method + " " + path + " HTTP/1.1\r\nHost: h\r\nX-Forwarded-For: 203.0.113.9\r\n\r\n" +
				"GET /inline/y HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n"
			want := exchangeBytes(t, glAddr, raw)
			got := exchangeBytes(t, loopAddr, raw)
			if got != want {
				t.Errorf("%s %s:\nloop      %q\ngoroutine %q", method, path, got, want)
			}
		}
	}
	if p := pooledOnGoroutines(up); p != 0 {
		t.Errorf("%d connections in the loop server's goroutine pool: requests were handed off", p)
	}
}

// TestLoopProxyIdleSweep: pooled connections idle beyond IdleConnTimeout
// are closed by the loop even if never asked for again (the targets of an
// upstream a reload replaced).
func TestLoopProxyIdleSweep(t *testing.T) {
	needLoopProxyRun(t)
	testenv.CheckGoroutines(t)
	var closed atomic.Int32
	o := startOrigin(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }),
		func(s *http.Server) {
			s.ConnState = func(c net.Conn, st http.ConnState) {
				if st == http.StateClosed {
					closed.Add(1)
				}
			}
		})
	addr, _, _ := startLoopProxy(t, UpstreamOptions{Targets: []string{o.addr}, IdleConnTimeout: 100 * time.Millisecond}, server.Options{})
	c := client(t)
	req, _ := http.NewRequest("GET", "http://"+addr+"/", nil)
	if resp, b := get(t, c, req); resp.StatusCode != 200 || string(b) != "ok" {
		t.Fatalf("got %d %q", resp.StatusCode, b)
	}
	testnet.Poll(5*time.Second, func() bool { return closed.Load() != 0 })
	if closed.Load() != 1 {
		t.Fatalf("origin saw %d connections closed; want the idle pooled one closed by the loop", closed.Load())
	}
}

// panicky is a LoopUpstream whose response-head step panics.
type panicky struct{ server.LoopUpstream }

func (panicky) WriteResponseHead(*server.ResponseWriter, *phttp.Response, []byte, bool) []byte {
	panic("boom")
}

type panicMux struct{ loopMux }

func (m panicMux) LoopProxy(r *server.Request) server.LoopUpstream {
	if bytes.HasPrefix(r.Target(), []byte("/panic")) {
		return panicky{m.p.LoopProxy(r)}
	}
	return m.loopMux.LoopProxy(r)
}

// TestLoopProxyPanicContained: a panic in the proxy's code on the loop
// closes that client connection only; the loop serves on.
func TestLoopProxyPanicContained(t *testing.T) {
	needLoopProxyRun(t)
	testenv.CheckGoroutines(t)
	o := pathOrigin(t)
	up := newUpstream(t, UpstreamOptions{Targets: []string{o.addr}})
	s := server.New(server.Options{Handler: panicMux{loopMux{New(up, Options{})}}, LoopProxy: true,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	addr := servetest.Serve(t, s, server.EngineLoop)
	if got := exchangeBytes(t, addr, "GET /panic HTTP/1.1\r\nHost: h\r\n\r\n"); got != "[]" {
		t.Errorf("panicking exchange answered %s, want the connection closed", got)
	}
	c := client(t)
	req, _ := http.NewRequest("GET", "http://"+addr+"/after", nil)
	if resp, b := get(t, c, req); resp.StatusCode != 200 || string(b) != "origin /after" {
		t.Errorf("after the panic: %d %q", resp.StatusCode, b)
	}
}

// TestLoopProxyShutdownFinishesExchange: Shutdown lets a proxied request in
// flight on the loop finish, then closes its connection.
func TestLoopProxyShutdownFinishesExchange(t *testing.T) {
	needLoopProxyRun(t)
	testenv.CheckGoroutines(t)
	started := make(chan struct{})
	o := startOrigin(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(started)
		time.Sleep(300 * time.Millisecond)
		io.WriteString(w, "late")
	}))
	addr, _, stop := startLoopProxy(t, UpstreamOptions{Targets: []string{o.addr}}, server.Options{})
	got := make(chan string, 1)
	go func() { got <- exchangeBytes(t, addr, "GET /slow HTTP/1.1\r\nHost: h\r\n\r\n") }()
	<-started
	stop() // returns once the loop has ended
	select {
	case b := <-got:
		if !strings.Contains(b, "200 OK") || !strings.Contains(b, "late") || !strings.Contains(b, "Connection: close") {
			t.Errorf("in-flight exchange answered %s", b)
		}
	case <-time.After(testTimeout):
		t.Fatal("no answer")
	}
}

// TestLoopProxyDialAfterListenerClosed: once the loop has closed its
// listener (StopListener here; Shutdown and SIGTERM do the same), the
// listener's descriptor number is free, and the loop's next upstream socket
// gets it when no lower number is. That socket's events used to be taken
// for the closed listener's and dropped: the loop spun on them until the
// connect timeout and answered 504 (seen as a rare failure of
// TestSocketActivationRestart/loop-proxy). The test fills every lower
// free number so that the upstream dial gets the listener's.
func TestLoopProxyDialAfterListenerClosed(t *testing.T) {
	needLoopProxyRun(t)
	testenv.CheckGoroutines(t)
	o := startOrigin(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		io.WriteString(w, "origin got "+string(b))
	}))
	r := serveLoopProxy(t, UpstreamOptions{Targets: []string{o.addr}, ConnectTimeout: time.Second}, server.Options{})
	s, l := r.s, r.l
	lfd := listenerFD(t, l)

	// A request whose body is still coming keeps the connection busy
	// across the listener's close; the loop dials only once it is whole.
	// An inline answer first: the loop serves (StopListener finds it).
	c := testnet.Dial(t, l.Addr().String(), testTimeout)
	br := bufio.NewReader(c)
	io.WriteString(c, "GET /inline/a HTTP/1.1\r\nHost: x\r\n\r\n")
	if resp, err := http.ReadResponse(br, nil); err != nil || resp.StatusCode != 200 {
		t.Fatalf("inline request: %v", err)
	} else {
		io.Copy(io.Discard, resp.Body)
	}
	io.WriteString(c, "POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nab")
	if !s.StopListener(l) {
		t.Fatal("StopListener: listener not found")
	}
	fill := fillBelow(t, lfd)
	io.WriteString(c, "cd")
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("no response after the listener closed (listener descriptor %d, %d lower ones filled): %v", lfd, fill, err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "origin got abcd" {
		t.Errorf("after the listener closed: %d %q, want 200 \"origin got abcd\"", resp.StatusCode, body)
	}
}

// listenerFD returns l's descriptor number (the loop accepts on it).
func listenerFD(t *testing.T, l net.Listener) int {
	t.Helper()
	rc, err := l.(*net.TCPListener).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	fd := -1
	rc.Control(func(f uintptr) { fd = int(f) })
	return fd
}

// fillBelow opens /dev/null until every descriptor number below n is in
// use and n itself is free, so that the process's next socket gets n; the
// descriptors are closed at cleanup. It returns how many it opened, and
// fails if n is taken (by another goroutine of the test process).
func fillBelow(t *testing.T, n int) int {
	t.Helper()
	var fds []int
	t.Cleanup(func() {
		for _, fd := range fds {
			syscall.Close(fd)
		}
	})
	for range n + 1 {
		fd, err := syscall.Open(os.DevNull, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		if fd == n {
			syscall.Close(fd) // free, and the lowest free number
			return len(fds)
		}
		fds = append(fds, fd)
		if fd > n {
			t.Fatalf("descriptor %d was taken again before the test could free it", n)
		}
	}
	t.Fatalf("descriptor %d not reached", n)
	return 0
}
