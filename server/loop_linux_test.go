//go:build linux

package server

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/simdedge/simdedge/internal/testenv"
	"github.com/simdedge/simdedge/internal/testnet"
)

// Tests of what only the event-loop engine has: inline serving, the
// hand-off to goroutines, non-blocking writes, its deadline scan, its
// connection accounting. The shared end-to-end suite also runs on it
// (engine_test.go).

func startLoop(t *testing.T, h Handler, o Options) (*Server, string) {
	t.Helper()
	if testEngine != EngineLoop {
		t.Skip("loop-engine test: runs in the loop pass of TestMain")
	}
	return startEngine(t, h, o, EngineLoop)
}

// loopOf returns s's event loop (one ServeLoop call).
func loopOf(t *testing.T, s *Server) *loop {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	for time.Now().Before(deadline) {
		s.mu.Lock()
		for k := range s.aborts {
			if lp, ok := k.(*loop); ok {
				s.mu.Unlock()
				return lp
			}
		}
		s.mu.Unlock()
		time.Sleep(time.Millisecond)
	}
	t.Fatal("no event loop registered")
	return nil
}

// handedOff is the number of connections served by goroutines.
func handedOff(s *Server) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// mixedHandler serves /inline/* on the loop; everything else (a plain
// HandlerFunc that reads the body as a stream) needs a goroutine.
type mixedHandler struct{}

func (mixedHandler) ServeEdge(w *ResponseWriter, r *Request) {
	b, _ := io.ReadAll(r.Body())
	w.WriteString("goroutine " + string(r.Target()) + " " + strconv.Itoa(len(b)))
}

func (mixedHandler) InlineHandler(r *Request) Handler {
	if strings.HasPrefix(string(r.Target()), "/inline/") {
		return inlineAnswer
	}
	return nil
}

var inlineAnswer = HandlerFunc(func(w *ResponseWriter, r *Request) {
	b, _ := r.BodyBytes()
	w.WriteString("loop " + string(r.Target()) + " " + strconv.Itoa(len(b)))
})

func TestLoopInlineStaysOnLoop(t *testing.T) {
	s, addr := startLoop(t, mixedHandler{}, Options{})
	c := dial(t, addr)
	br := bufio.NewReader(c)
	for i := range 3 {
		io.WriteString(c, "POST /inline/"+strconv.Itoa(i)+" HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc")
		if _, body := readResponse(t, br, "POST"); body != "loop /inline/"+strconv.Itoa(i)+" 3" {
			t.Fatalf("got %q", body)
		}
	}
	if n := handedOff(s); n != 0 {
		t.Fatalf("%d connections handed off, want 0", n)
	}
	if n := loopOf(t, s).count.Load(); n != 1 {
		t.Fatalf("loop counts %d connections, want 1", n)
	}
}

// TestLoopHandoffPipelined sends, in one write, requests served inline, one
// that needs a goroutine, and more behind it: the hand-off carries the
// buffered bytes, and the responses come back in order.
func TestLoopHandoffPipelined(t *testing.T) {
	s, addr := startLoop(t, mixedHandler{}, Options{})
	c := dial(t, addr)
	br := bufio.NewReader(c)
	reqs := []struct{ raw, want string }{
		{"GET /inline/a HTTP/1.1\r\nHost: x\r\n\r\n", "loop /inline/a 0"},
		{"POST /inline/b HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nhi", "loop /inline/b 2"},
		{"POST /go HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nabcd", "goroutine /go 4"},
		{"GET /inline/c HTTP/1.1\r\nHost: x\r\n\r\n", "goroutine /inline/c 0"},
		{"POST /go2 HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nxyz\r\n0\r\n\r\n", "goroutine /go2 3"},
	}
	var all string
	for _, r := range reqs {
		all += r.raw
	}
	io.WriteString(c, all)
	for _, r := range reqs {
		if _, body := readResponse(t, br, "GET"); body != r.want {
			t.Fatalf("got %q, want %q", body, r.want)
		}
	}
	if n := handedOff(s); n != 1 {
		t.Fatalf("%d connections handed off, want 1", n)
	}
	// The same connection goes on, on its goroutine.
	io.WriteString(c, "GET /inline/d HTTP/1.1\r\nHost: x\r\n\r\n")
	if _, body := readResponse(t, br, "GET"); body != "goroutine /inline/d 0" {
		t.Fatalf("after hand-off: %q", body)
	}
	c.Close()
	lp := loopOf(t, s)
	testnet.WaitFor(t, testTimeout, "the handed-off connection's slot", func() bool { return lp.count.Load() == 0 })
}

// TestLoopHandoffBodyNotBuffered: a body that has not arrived with its head
// is waited for on the loop when small, and handed off when large or when
// the client expects 100-continue.
func TestLoopHandoffBodyNotBuffered(t *testing.T) {
	s, addr := startLoop(t, mixedHandler{}, Options{})
	small := dial(t, addr)
	sbr := bufio.NewReader(small)
	io.WriteString(small, "POST /inline/s HTTP/1.1\r\nHost: x\r\nContent-Length: 6\r\n\r\nabc")
	time.Sleep(20 * time.Millisecond)
	io.WriteString(small, "def")
	if _, body := readResponse(t, sbr, "POST"); body != "loop /inline/s 6" {
		t.Fatalf("small body: %q", body)
	}
	if n := handedOff(s); n != 0 {
		t.Fatalf("small body: %d handed off", n)
	}

	big := dial(t, addr)
	bbr := bufio.NewReader(big)
	n := loopBodyMax + 1
	io.WriteString(big, "POST /inline/b HTTP/1.1\r\nHost: x\r\nContent-Length: "+strconv.Itoa(n)+"\r\n\r\n")
	go big.Write([]byte(strings.Repeat("z", n)))
	if _, body := readResponse(t, bbr, "POST"); body != "goroutine /inline/b "+strconv.Itoa(n) {
		t.Fatalf("big body: %q", body)
	}

	ex := dial(t, addr)
	ebr := bufio.NewReader(ex)
	io.WriteString(ex, "POST /inline/e HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\n")
	if line, _ := ebr.ReadString('\n'); line != "HTTP/1.1 100 Continue\r\n" {
		t.Fatalf("expect: %q", line)
	}
	ebr.ReadString('\n')
	io.WriteString(ex, "ok")
	if _, body := readResponse(t, ebr, "POST"); body != "goroutine /inline/e 2" {
		t.Fatalf("expect: %q", body)
	}
	if n := handedOff(s); n != 2 {
		t.Fatalf("%d handed off, want 2", n)
	}
}

// TestLoopWriteEAGAIN: responses bigger than the socket buffers, to a client
// that reads late and slowly, continue on EPOLLOUT, complete and in order.
func TestLoopWriteEAGAIN(t *testing.T) {
	const size = 1 << 20
	body := strings.Repeat("0123456789abcdef", size/16)
	h := Inline(HandlerFunc(func(w *ResponseWriter, r *Request) {
		w.SetContentLength(size)
		w.WriteString(string(r.Target()[1:]))
		w.WriteString(body[1:])
	}))
	_, addr := startLoop(t, h, Options{})
	c := dial(t, addr)
	var reqs string
	for i := range 4 {
		reqs += "GET /" + strconv.Itoa(i) + " HTTP/1.1\r\nHost: x\r\n\r\n"
	}
	io.WriteString(c, reqs)
	time.Sleep(100 * time.Millisecond) // the server's writes hit EAGAIN
	br := bufio.NewReaderSize(c, 512)
	for i := range 4 {
		resp, got := readResponse(t, br, "GET")
		if resp.StatusCode != 200 || len(got) != size || got[1:] != body[1:] || got[0] != byte('0'+i) {
			t.Fatalf("response %d: status %d, %d bytes", i, resp.StatusCode, len(got))
		}
	}
}

// TestLoopWriteTimeout: a client that never reads is dropped after the
// Write timeout.
func TestLoopWriteTimeout(t *testing.T) {
	const wt = 200 * time.Millisecond
	body := strings.Repeat("x", 4<<20)
	h := Inline(HandlerFunc(func(w *ResponseWriter, r *Request) { w.WriteString(body) }))
	s, addr := startLoop(t, h, Options{Timeouts: Timeouts{Write: wt}})
	c := dial(t, addr)
	c.(*net.TCPConn).SetReadBuffer(4 << 10)
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	lp := loopOf(t, s)
	testnet.WaitFor(t, testTimeout, "the connection", func() bool { return lp.count.Load() == 1 })
	start := time.Now()
	testnet.WaitFor(t, testTimeout, "the write timeout", func() bool { return lp.count.Load() == 0 })
	if el := time.Since(start); el > wt+2*time.Second {
		t.Errorf("dropped after %v, want about %v", el, wt)
	}
}

// TestLoopShutdownPendingWrite: Shutdown lets a response still being
// written finish, then closes the connection, and returns nil.
func TestLoopShutdownPendingWrite(t *testing.T) {
	const size = 2 << 20
	body := strings.Repeat("y", size)
	h := Inline(HandlerFunc(func(w *ResponseWriter, r *Request) { w.WriteString(body) }))
	s, addr := startLoop(t, h, Options{})
	c := dial(t, addr)
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	lp := loopOf(t, s)
	time.Sleep(50 * time.Millisecond)
	idle := dial(t, addr)
	testnet.WaitFor(t, testTimeout, "both connections", func() bool { return lp.count.Load() == 2 })
	shut := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		shut <- s.Shutdown(ctx)
	}()
	expectClosed(t, bufio.NewReader(idle))
	br := bufio.NewReader(c)
	if _, got := readResponse(t, br, "GET"); len(got) != size {
		t.Fatalf("got %d bytes, want %d", len(got), size)
	}
	expectClosed(t, br)
	if err := <-shut; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
}

// TestLoopClose: Close ends every connection at once, a pending response
// included.
func TestLoopClose(t *testing.T) {
	body := strings.Repeat("y", 4<<20)
	h := Inline(HandlerFunc(func(w *ResponseWriter, r *Request) { w.WriteString(body) }))
	s, addr := startLoop(t, h, Options{})
	c := dial(t, addr)
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	lp := loopOf(t, s)
	testnet.WaitFor(t, testTimeout, "the connection", func() bool { return lp.count.Load() == 1 })
	s.Close()
	if _, err := io.Copy(io.Discard, c); err != nil && !isReset(err) {
		t.Fatalf("reading after Close: %v", err)
	}
}

func isReset(err error) bool { return strings.Contains(err.Error(), "reset") }

// TestLoopConnLimit: beyond MaxConns, with no idle connection to close
// in its place (admit.go), the loop stops accepting until a connection
// (served on the loop or handed off) ends.
func TestLoopConnLimit(t *testing.T) {
	s, addr := startLoop(t, mixedHandler{}, Options{Limits: Limits{MaxConns: 2, MaxConnsPerIP: -1}})
	a := dial(t, addr)
	io.WriteString(a, "GET /inline/a HTTP/1.1\r\n") // busy: a head under way
	b := dial(t, addr)
	// Handed off, busy: its handler waits for the rest of the body.
	io.WriteString(b, "POST /go HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\nabc")
	for deadline := time.Now().Add(testTimeout); handedOff(s) != 1; {
		if time.Now().After(deadline) {
			t.Fatal("b was not handed off")
		}
		time.Sleep(5 * time.Millisecond)
	}

	third := dial(t, addr) // held by the loop, or in the kernel's backlog
	io.WriteString(third, "GET /inline/3 HTTP/1.1\r\nHost: x\r\n\r\n")
	third.SetReadDeadline(time.Now().Add(150 * time.Millisecond))
	var one [1]byte
	if n, err := third.Read(one[:]); n != 0 || err == nil {
		t.Fatal("third connection served beyond MaxConns")
	}
	third.SetReadDeadline(time.Now().Add(testTimeout))
	b.Close() // the handed-off one frees its slot
	if _, body := readResponse(t, bufio.NewReader(third), "GET"); body != "loop /inline/3 0" {
		t.Fatalf("third: %q", body)
	}
	if n := loopOf(t, s).count.Load(); n != 2 {
		t.Fatalf("count %d, want 2", n)
	}
}

// TestLoopHandlerPanic: a panicking inline handler closes its connection;
// the loop goes on serving the others.
func TestLoopHandlerPanic(t *testing.T) {
	h := Inline(HandlerFunc(func(w *ResponseWriter, r *Request) {
		if string(r.Target()) == "/panic" {
			panic("test panic")
		}
		w.WriteString("fine")
	}))
	_, addr := startLoop(t, h, Options{Logger: discardLogger()})
	c := dial(t, addr)
	io.WriteString(c, "GET /panic HTTP/1.1\r\nHost: x\r\n\r\n")
	expectClosed(t, bufio.NewReader(c))
	d := dial(t, addr)
	io.WriteString(d, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	if _, body := readResponse(t, bufio.NewReader(d), "GET"); body != "fine" {
		t.Fatalf("got %q", body)
	}
}

// TestLoopChurnNoFDLeak opens and closes 1000 connections, half of them
// handed off, some closed by the client mid-head, and checks that the
// process's descriptors come back to where they were.
func TestLoopChurnNoFDLeak(t *testing.T) {
	s, addr := startLoop(t, mixedHandler{}, Options{})
	lp := loopOf(t, s)
	before := testenv.OpenFDs(t)
	const total, parallel = 1000, 50
	var wg sync.WaitGroup
	errs := make(chan error, total)
	sem := make(chan struct{}, parallel)
	for i := range total {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			c, err := net.DialTimeout("tcp", addr, testTimeout)
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(testTimeout))
			target := "/inline/" + strconv.Itoa(i)
			if i%2 == 1 {
				target = "/go/" + strconv.Itoa(i)
			}
			if i%10 == 9 {
				io.WriteString(c, "GET "+target) // partial head, then gone
				return
			}
			io.WriteString(c, "GET "+target+" HTTP/1.1\r\nHost: x\r\n\r\n")
			resp, err := http1Status(bufio.NewReader(c))
			if err != nil || resp != 200 {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("client: %v", err)
	}
	testnet.WaitFor(t, testTimeout, "every connection to end", func() bool { return lp.count.Load() == 0 && handedOff(s) == 0 })
	testnet.WaitFor(t, testTimeout, "descriptors to come back", func() bool { return testenv.OpenFDs(t) <= before })
}

func http1Status(br *bufio.Reader) (int, error) {
	line, err := br.ReadString('\n')
	if err != nil {
		return 0, err
	}
	if len(line) < 12 {
		return 0, io.ErrUnexpectedEOF
	}
	return strconv.Atoi(line[9:12])
}

// TestLoopZeroAlloc: a warm keep-alive connection served inline allocates
// nothing per request, in the whole process.
func TestLoopZeroAlloc(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	h := Inline(HandlerFunc(func(w *ResponseWriter, r *Request) {
		w.AddHeader("Content-Type", "text/plain")
		w.WriteString("ok\n")
	}))
	s, addr := startLoop(t, h, Options{})
	allocs := keepAliveAllocs(t, addr)
	if allocs != 0 {
		t.Errorf("%v allocations per request on the loop, want 0", allocs)
	}
	if n := handedOff(s); n != 0 {
		t.Fatalf("served by a goroutine (%d handed off), not the loop", n)
	}
}

func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// TestLoopMatchesGoroutine is a differential test of the two engines: the
// same bytes, cut into the same pieces, sent to a goroutine-engine server
// and a loop-engine server with the same handler (echoBody, inline where
// the loop can), must get the same bytes back (Date fields and interim
// "100 Continue" aside: both depend on timing).
func TestLoopMatchesGoroutine(t *testing.T) {
	o := Options{Limits: Limits{MaxBodyBytes: 1 << 10, MaxHeaderBytes: 512}}
	_, gaddr := startEngine(t, echoBody, o, EngineGoroutine)
	_, laddr := startLoop(t, echoBody, o)
	inputs := append([]string{
		"GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\nPOST /c HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nhi",
		"POST /big HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: x\r\nX-Long: " + strings.Repeat("a", 600) + "\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: x\r\n\r\nGET /\x01 HTTP/1.1\r\nHost: x\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: x\r\n\r\nGET / HTTP/2.0\r\nHost: x\r\n\r\n",
		"POST /ch HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\nGET /after HTTP/1.1\r\nHost: x\r\n\r\n",
		"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET /2 HTTP/1.0\r\n\r\n",
	}, fuzzSeeds...)
	for i, in := range inputs {
		for _, step := range []int{3, 64, len(in)} {
			g := exchangeRaw(t, gaddr, in, step)
			l := exchangeRaw(t, laddr, in, step)
			if !strings.HasPrefix(g, "HTTP/1.1 ") {
				t.Errorf("input %d, pieces of %d: no answer from the goroutine engine: %q", i, step, g)
			}
			if g != l {
				t.Errorf("input %d, pieces of %d: engines differ\ninput     %q\ngoroutine %q\nloop      %q", i, step, in, g, l)
			}
		}
	}
}

// exchangeRaw sends in to addr in pieces of step bytes, half-closes, and
// returns everything the server sent until it closed, with the Date fields
// and interim 100 responses removed.
func exchangeRaw(t *testing.T, addr, in string, step int) string {
	t.Helper()
	c := dial(t, addr)
	go func() {
		for rest := in; len(rest) > 0; {
			n := min(step, len(rest))
			if _, err := io.WriteString(c, rest[:n]); err != nil {
				return
			}
			rest = rest[n:]
			time.Sleep(time.Millisecond)
		}
		c.(*net.TCPConn).CloseWrite()
	}()
	out, _ := io.ReadAll(c) // a reset after the last answer ends it too
	s := strings.ReplaceAll(string(out), "HTTP/1.1 100 Continue\r\n\r\n", "")
	var b strings.Builder
	for line := range strings.SplitAfterSeq(s, "\r\n") {
		if !strings.HasPrefix(line, "Date: ") {
			b.WriteString(line)
		}
	}
	return b.String()
}
