package server

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// idleConns is how many idle keep-alive connections the memory test
// holds: enough that a few KiB each stand out of the test's own noise.
const idleConns = 500

// idleBudget is the most an idle plain keep-alive connection may cost the
// process (heap and goroutine stacks, server and test client together)
// on each engine. Before idle connections gave their buffers back
// (docs/decisions/0043-idle-connections.md), it was 7-8 KiB on the loop
// and 13 KiB or more on goroutines; on the loop 1.0-1.1 KiB before its
// lconn shrank from 496 to 256 bytes (0049-small-idle-connections.md),
// 0.65 KiB since. The client's side (net.TCPConn, netFD, addresses) is
// about 0.3 KiB of it.
var idleBudget = map[Engine]int{
	EngineLoop:      896,
	EngineGoroutine: 3072,
}

// idleSettle is how long the test lets its connections sit idle before it
// measures: on the goroutine engine they park after parkAfter.
var idleSettle = map[Engine]time.Duration{
	EngineLoop:      0,
	EngineGoroutine: parkAfter + parkAfter/2,
}

// remoteHandler answers the client's address, the target and the body's
// length, so that a connection served after an idle wait shows whose
// identity and whose bytes it got.
var remoteHandler = Inline(HandlerFunc(func(w *ResponseWriter, r *Request) {
	b, err := r.BodyBytes()
	if err != nil {
		w.WriteHeader(400)
		return
	}
	w.AddHeader("Content-Type", "text/plain")
	fmt.Fprintf(w, "%s %s %d", r.RemoteAddr(), r.Target(), len(b))
}))

// processBytes is the heap and stack memory in use after a collection.
func processBytes() int {
	heap, stack := processMem()
	return heap + stack
}

func processMem() (heap, stack int) {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int(m.HeapAlloc), int(m.StackInuse)
}

// TestIdleConnMemory: keep-alive connections that served one request and
// wait for the next cost the process at most idleBudget each, and each is
// then served correctly, with its own address, a request split across
// the idle wait and pipelined requests after it.
func TestIdleConnMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	if raceEnabled {
		t.Skip("the race detector's shadow memory is counted too")
	}
	_, addr := startTCP(t, remoteHandler, Options{})
	// Warm: one connection's worth of everything allocated once.
	warm := dial(t, addr)
	wbr := bufio.NewReader(warm)
	getOwn(t, warm, wbr, "/warm")
	warm.Close()
	heap0, stack0 := processMem()
	before := heap0 + stack0
	cls := make([]net.Conn, idleConns)
	defer func() {
		for _, c := range cls {
			if c != nil {
				c.Close()
			}
		}
	}()
	for i := range cls {
		// Not dial: its Cleanup costs the test 0.5 KiB per connection.
		c, err := net.DialTimeout("tcp", addr, testTimeout)
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(testTimeout))
		// The response is read whole: nothing stays buffered, and
		// the reader is not kept (it would count as the server's).
		getOwn(t, c, bufio.NewReaderSize(c, 256), "/first")
		cls[i] = c
	}
	budget := idleBudget[testEngine]
	time.Sleep(idleSettle[testEngine])
	// The connections give their buffers back once the server has
	// written the response, a moment after the client read it.
	per := 0
	for try := 0; try < 20; try++ {
		per = (processBytes() - before) / idleConns
		if per <= budget {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	heap1, stack1 := processMem()
	t.Logf("%s engine: %d bytes per idle connection (server and client; heap %d, stacks %d)",
		testEngine, per, (heap1-heap0)/idleConns, (stack1-stack0)/idleConns)
	if per > budget {
		t.Errorf("%d bytes per idle keep-alive connection, want at most %d", per, budget)
	}
	// Served after the wait: half of a head, a pause (the connection
	// waits mid-head now), the rest; then two pipelined requests, the
	// second with a body. In reverse order, so that connections take
	// other connections' buffers.
	for i := len(cls) - 1; i >= 0; i-- {
		c := cls[i]
		br := bufio.NewReader(c)
		head := "GET /second-" + strconv.Itoa(i) + " HTTP/1.1\r\nHost: x\r\n\r\n"
		send(t, c, head[:len(head)/2])
		if i%50 == 0 {
			time.Sleep(20 * time.Millisecond)
		}
		send(t, c, head[len(head)/2:]+
			"GET /third HTTP/1.1\r\nHost: x\r\n\r\nPOST /fourth HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello")
		local := c.LocalAddr().String()
		for _, want := range []string{
			local + " /second-" + strconv.Itoa(i) + " 0",
			local + " /third 0",
			local + " /fourth 5",
		} {
			resp, body := readResponse(t, br, "GET")
			if resp.StatusCode != 200 || body != want {
				t.Fatalf("conn %d: %d %q, want 200 %q", i, resp.StatusCode, body, want)
			}
		}
	}
}

// TestIdleConnLargeAndSlow: after an idle wait a connection takes a head
// larger than the read buffer's first size and a body sent in pieces with
// pauses, and goes idle again between them.
func TestIdleConnLargeAndSlow(t *testing.T) {
	_, addr := startTCP(t, remoteHandler, Options{})
	c := dial(t, addr)
	br := bufio.NewReader(c)
	local := c.LocalAddr().String()
	getOwn(t, c, br, "/a")
	time.Sleep(20 * time.Millisecond) // idle: buffers given back
	big := "/" + strings.Repeat("b", initialReadBuf+1000)
	send(t, c, "GET "+big+" HTTP/1.1\r\nHost: x\r\n\r\n")
	if resp, body := readResponse(t, br, "GET"); resp.StatusCode != 200 || body != local+" "+big+" 0" {
		t.Fatalf("large head after idle: %d %.60q", resp.StatusCode, body)
	}
	time.Sleep(20 * time.Millisecond)
	body := strings.Repeat("z", 3000)
	req := "POST /slow HTTP/1.1\r\nHost: x\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
	for i := 0; i < len(req); i += 700 {
		send(t, c, req[i:min(i+700, len(req))])
		time.Sleep(5 * time.Millisecond)
	}
	if resp, got := readResponse(t, br, "POST"); resp.StatusCode != 200 || got != local+" /slow 3000" {
		t.Fatalf("slow body after idle: %d %q", resp.StatusCode, got)
	}
	time.Sleep(20 * time.Millisecond)
	getOwn(t, c, br, "/again")
	c.Close()
}

// getOwn sends GET target on c and checks the answer: 200, c's own
// address, the target, no body.
func getOwn(t *testing.T, c net.Conn, br *bufio.Reader, target string) {
	t.Helper()
	send(t, c, "GET "+target+" HTTP/1.1\r\nHost: x\r\n\r\n")
	resp, body := readResponse(t, br, "GET")
	if want := c.LocalAddr().String() + " " + target + " 0"; resp.StatusCode != 200 || body != want {
		t.Fatalf("GET %s: %d %q, want 200 %q", target, resp.StatusCode, body, want)
	}
}

func send(t *testing.T, c net.Conn, s string) {
	t.Helper()
	if _, err := io.WriteString(c, s); err != nil {
		t.Fatal(err)
	}
}

// parkWait is how long the park tests let a connection sit idle: past
// parkAfter, so that on the goroutine engine it is in the poller (the loop
// parks at once).
const parkWait = parkAfter + parkAfter/2

// TestIdleParkedShutdown: Shutdown closes idle connections that parked (on
// the goroutine engine their goroutine has ended; the poller must hand
// them back) and returns well before its bound.
func TestIdleParkedShutdown(t *testing.T) {
	s, addr := startTCP(t, remoteHandler, Options{})
	c := dial(t, addr)
	br := bufio.NewReader(c)
	getOwn(t, c, br, "/a")
	time.Sleep(parkWait)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	start := time.Now()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown with a parked connection: %v after %v", err, time.Since(start))
	}
	expectClosed(t, br)
}

// TestIdleParkedTimeout: a parked connection is still closed by its Idle
// timeout, which no read deadline enforces while it has no goroutine.
func TestIdleParkedTimeout(t *testing.T) {
	const idle = 3 * parkAfter
	_, addr := startTCP(t, remoteHandler, Options{Timeouts: Timeouts{Idle: idle}})
	c := dial(t, addr)
	br := bufio.NewReader(c)
	getOwn(t, c, br, "/a")
	start := time.Now()
	c.SetReadDeadline(start.Add(idle + 5*time.Second))
	expectClosed(t, br)
	// Lazy deadlines close between 3/4 Idle and Idle after the wait
	// began (Timeouts.Idle).
	if d := time.Since(start); d < idle*3/4-50*time.Millisecond {
		t.Errorf("closed after %v, before 3/4 of Idle %v", d, idle)
	}
}

// TestIdleParkedReclaim: at MaxConns, a new client is admitted by closing
// a parked idle connection (reclaimIdle must wake it from the poller).
func TestIdleParkedReclaim(t *testing.T) {
	const slots = 2
	_, addr := startTCP(t, remoteHandler, Options{Limits: Limits{MaxConns: slots, MaxConnsPerIP: -1}})
	var held []net.Conn
	for range slots {
		c := dial(t, addr)
		getOwn(t, c, bufio.NewReader(c), "/held")
		held = append(held, c)
	}
	time.Sleep(parkWait)
	c := dial(t, addr)
	c.SetDeadline(time.Now().Add(5 * time.Second))
	getOwn(t, c, bufio.NewReader(c), "/new")
	// The new client is admitted once the victim is chosen; the victim
	// must then be closed too, not left parked with its slot counted.
	closed := 0
	for _, h := range held {
		h.SetReadDeadline(time.Now().Add(2 * time.Second))
		var b [1]byte
		if _, err := h.Read(b[:]); err != nil && !isTimeout(err) {
			closed++
		}
	}
	if closed != 1 {
		t.Errorf("%d of the %d idle connections closed to admit the new one, want 1", closed, slots)
	}
}
