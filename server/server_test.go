package server

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// echoBody answers with method, target and the body it read. It is
// declared Inline: the loop engine runs it on the loop when the body is
// buffered, and hands the connection off otherwise.
var echoBody = Inline(HandlerFunc(func(w *ResponseWriter, r *Request) {
	b, err := r.BodyBytes()
	if err != nil {
		w.WriteHeader(413)
		w.WriteString(err.Error())
		return
	}
	fmt.Fprintf(w, "%s %s %d:%s", r.Method(), r.Target(), len(b), b)
}))

func TestNetHTTPClient(t *testing.T) {
	_, addr := startTCP(t, echoBody, Options{})
	c := newClient()
	closeIdle(t, c)
	base := "http://" + addr
	for i := range 3 {
		resp, err := c.Get(base + "/a?i=" + strconv.Itoa(i))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if want := fmt.Sprintf("GET /a?i=%d 0:", i); string(b) != want || resp.StatusCode != 200 {
			t.Fatalf("got %d %q, want 200 %q", resp.StatusCode, b, want)
		}
		if resp.Header.Get("Date") == "" {
			t.Error("no Date field")
		}
	}
	// Content-Length body.
	resp, err := c.Post(base+"/p", "text/plain", strings.NewReader("hello"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "POST /p 5:hello" {
		t.Fatalf("got %q", b)
	}
	// Chunked body: net/http sends one when the length is unknown.
	pr, pw := io.Pipe()
	go func() {
		for i := range 10 {
			fmt.Fprintf(pw, "part%d-", i)
		}
		pw.Close()
	}()
	resp, err = c.Post(base+"/chunked", "text/plain", pr)
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	want := "part0-part1-part2-part3-part4-part5-part6-part7-part8-part9-"
	if string(b) != fmt.Sprintf("POST /chunked %d:%s", len(want), want) {
		t.Fatalf("got %q", b)
	}
}

func TestKeepAliveReusesConnection(t *testing.T) {
	var conns atomic.Int32
	_, addr := startTCP(t, okHandler("ok"), Options{})
	c := newClient()
	closeIdle(t, c)
	c.Transport.(*http.Transport).DialContext = countingDialer(&conns)
	for range 5 {
		resp, err := c.Get("http://" + addr + "/")
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d connections for 5 sequential requests, want 1", n)
	}
}

func TestPipelining(t *testing.T) {
	_, addr := startTCP(t, echoBody, Options{})
	c := dial(t, addr)
	// Three requests in one write, one with a body, then a fourth split
	// across writes: the answers come back in order.
	batch := crlf("GET /1 HTTP/1.1\nHost: x\n\nPOST /2 HTTP/1.1\nHost: x\nContent-Length: 3\n\nabcGET /3 HTTP/1.1\nHost: x\n\nGET /4 HT")
	if _, err := io.WriteString(c, batch); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	for _, want := range []string{"GET /1 0:", "POST /2 3:abc", "GET /3 0:"} {
		_, body := readResponse(t, br, "GET")
		if body != want {
			t.Fatalf("got %q, want %q", body, want)
		}
	}
	io.WriteString(c, crlf("TP/1.1\nHost: x\nConnection: close\n\n"))
	resp, body := readResponse(t, br, "GET")
	if body != "GET /4 0:" || !resp.Close {
		t.Fatalf("got %q close=%v", body, resp.Close)
	}
	expectClosed(t, br)
}

func TestChunkedRequestRaw(t *testing.T) {
	_, addr := startTCP(t, echoBody, Options{})
	c := dial(t, addr)
	br := bufio.NewReader(c)
	// Chunk lines split at awkward places, with extensions and a trailer.
	parts := []string{
		"POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n",
		"5;ext=1\r\nhel", "lo\r\n", "6\r", "\n worl", "d\r\n0\r\nTrailer-X: 1\r\n", "\r\n",
	}
	for _, p := range parts {
		io.WriteString(c, p)
		time.Sleep(2 * time.Millisecond)
	}
	_, body := readResponse(t, br, "POST")
	if body != "POST /c 11:hello world" {
		t.Fatalf("got %q", body)
	}
}

func TestExpectContinue(t *testing.T) {
	_, addr := startTCP(t, echoBody, Options{})
	c := dial(t, addr)
	br := bufio.NewReader(c)
	io.WriteString(c, crlf("POST /e HTTP/1.1\nHost: x\nContent-Length: 4\nExpect: 100-continue\n\n"))
	line, err := br.ReadString('\n')
	if err != nil || line != "HTTP/1.1 100 Continue\r\n" {
		t.Fatalf("got %q, %v; want 100 Continue", line, err)
	}
	if l, _ := br.ReadString('\n'); l != "\r\n" {
		t.Fatalf("got %q after 100 Continue", l)
	}
	io.WriteString(c, "data")
	_, body := readResponse(t, br, "POST")
	if body != "POST /e 4:data" {
		t.Fatalf("got %q", body)
	}
	// A handler that does not read the body: no 100, and the connection
	// closes after the final answer (the client never sends the body).
	_, addr2 := startTCP(t, okHandler("no"), Options{})
	c2 := dial(t, addr2)
	br2 := bufio.NewReader(c2)
	io.WriteString(c2, crlf("POST /e HTTP/1.1\nHost: x\nContent-Length: 4\nExpect: 100-continue\n\n"))
	resp, body := readResponse(t, br2, "POST")
	if resp.StatusCode != 200 || body != "no" || !resp.Close {
		t.Fatalf("got %d %q close=%v", resp.StatusCode, body, resp.Close)
	}
	expectClosed(t, br2)
}

// TestBadInput sends requests that parse/http rejects and checks the
// status, the "Connection: close" and the closed connection, and that the
// handler never ran.
func TestBadInput(t *testing.T) {
	var ran atomic.Int32
	h := HandlerFunc(func(w *ResponseWriter, r *Request) { ran.Add(1) })
	_, addr := startTCP(t, h, Options{Limits: Limits{MaxHeaderBytes: 4096, MaxHeaders: 10, MaxBodyBytes: 100, MaxRequestLine: 1024}})
	for _, tc := range badRequests {
		t.Run(tc.name, func(t *testing.T) {
			c := dial(t, addr)
			io.WriteString(c, tc.req)
			br := bufio.NewReader(c)
			resp, _ := readResponse(t, br, "GET")
			if resp.StatusCode != tc.status {
				t.Errorf("status %d, want %d", resp.StatusCode, tc.status)
			}
			if !resp.Close {
				t.Error("no Connection: close")
			}
			expectClosed(t, br)
		})
	}
	if n := ran.Load(); n != 0 {
		t.Errorf("handler ran %d times on rejected input", n)
	}
}

// badRequests are requests the strict parser rejects, one per rule, with
// the status a server must answer (parse/http.StatusFor). The proxy tests
// reuse them to check that nothing is forwarded.
var badRequests = []struct {
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
	{"CL and TE", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400},
	{"conflicting CL", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd", 400},
	{"bad CL", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: +3\r\n\r\nabc", 400},
	{"chunked not final", "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, gzip\r\n\r\n", 400},
	{"unknown coding", "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: foo\r\n\r\n", 501},
	{"TE in 1.0", "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400},
	{"bad method", "G(T / HTTP/1.1\r\nHost: x\r\n\r\n", 400},
	{"bad target", "GET /a b HTTP/1.1\r\nHost: x\r\n\r\n", 400},
	{"bad version", "GET / HTTP/1.x\r\nHost: x\r\n\r\n", 400},
	{"HTTP/2.0", "GET / HTTP/2.0\r\nHost: x\r\n\r\n", 505},
	{"control in value", "GET / HTTP/1.1\r\nHost: x\r\nX: a\x01b\r\n\r\n", 400},
	{"bad header name", "GET / HTTP/1.1\r\nHost: x\r\nX(y: 1\r\n\r\n", 400},
	{"leading whitespace", "GET / HTTP/1.1\r\n Host: x\r\n\r\n", 400},
	{"request line too long", "GET /" + strings.Repeat("a", 2000) + " HTTP/1.1\r\nHost: x\r\n\r\n", 414},
	{"header too large", "GET / HTTP/1.1\r\nHost: x\r\nX: " + strings.Repeat("a", 5000) + "\r\n\r\n", 431},
	{"too many headers", "GET / HTTP/1.1\r\nHost: x\r\n" + strings.Repeat("X: 1\r\n", 11) + "\r\n", 431},
	{"body over limit", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 101\r\n\r\n", 413},
}

func TestSlowHeaderDropped(t *testing.T) {
	const rh = 300 * time.Millisecond
	_, addr := startTCP(t, okHandler("ok"), Options{Timeouts: Timeouts{ReadHeader: rh}})
	// A first head's budget runs from the server's accept (admit.go), which
	// may come before dial returns here: the clock starts before dialing,
	// or the connection can close a little before rh after it.
	start := time.Now()
	c := dial(t, addr)
	// A byte every 50 ms keeps a naive per-read timeout from firing.
	go func() {
		for _, b := range []byte("GET / HTTP/1.1\r\nHost: x\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaa") {
			if _, err := c.Write([]byte{b}); err != nil {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	br := bufio.NewReader(c)
	expectClosed(t, br)
	if el := time.Since(start); el < rh || el > rh+2*time.Second {
		t.Errorf("closed after %v, want about %v", el, rh)
	}
}

func TestIdleTimeout(t *testing.T) {
	const idle = 200 * time.Millisecond
	_, addr := startTCP(t, okHandler("ok"), Options{Timeouts: Timeouts{Idle: idle}})
	c := dial(t, addr)
	br := bufio.NewReader(c)
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	readResponse(t, br, "GET")
	start := time.Now()
	expectClosed(t, br)
	if el := time.Since(start); el < idle*3/4 || el > idle+2*time.Second {
		t.Errorf("idle connection closed after %v, want about %v", el, idle)
	}
}

func TestGracefulShutdown(t *testing.T) {
	started := make(chan struct{})
	release := make(chan struct{})
	h := HandlerFunc(func(w *ResponseWriter, r *Request) {
		if string(r.Target()) == "/slow" {
			close(started)
			<-release
		}
		w.WriteString("done")
	})
	s, addr := startTCP(t, h, Options{})
	idle := dial(t, addr)
	ibr := bufio.NewReader(idle)
	io.WriteString(idle, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	readResponse(t, ibr, "GET")

	busy := dial(t, addr)
	bbr := bufio.NewReader(busy)
	io.WriteString(busy, "GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
	<-started
	shut := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		shut <- s.Shutdown(ctx)
	}()
	expectClosed(t, ibr) // the idle connection closes at once
	if _, err := dial2(addr); err == nil {
		t.Error("new connection accepted during shutdown")
	}
	close(release)
	resp, body := readResponse(t, bbr, "GET")
	if body != "done" || !resp.Close {
		t.Errorf("in-flight request: %q close=%v", body, resp.Close)
	}
	if err := <-shut; err != nil {
		t.Errorf("Shutdown: %v", err)
	}
}

func TestShutdownDrainTimeout(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{})
	h := HandlerFunc(func(w *ResponseWriter, r *Request) { close(started); <-release })
	s, addr := startTCP(t, h, Options{Timeouts: Timeouts{Drain: 100 * time.Millisecond}})
	c := dial(t, addr)
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	<-started
	go func() { time.Sleep(300 * time.Millisecond); close(release) }()
	start := time.Now()
	err := s.Shutdown(context.Background())
	if err != context.DeadlineExceeded {
		t.Errorf("Shutdown = %v, want DeadlineExceeded", err)
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Errorf("Shutdown took %v", el)
	}
}

func TestChunkedBodyTooLarge(t *testing.T) {
	_, addr := startTCP(t, echoBody, Options{Limits: Limits{MaxBodyBytes: 10}})
	c := dial(t, addr)
	br := bufio.NewReader(c)
	io.WriteString(c, "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n8\r\n12345678\r\n8\r\n12345678\r\n0\r\n\r\n")
	resp, _ := readResponse(t, br, "POST")
	if resp.StatusCode != 413 || !resp.Close {
		t.Fatalf("got %d close=%v, want 413 and close", resp.StatusCode, resp.Close)
	}
	expectClosed(t, br)
}

func TestLargeStreamedResponse(t *testing.T) {
	const size = 5 << 20
	h := HandlerFunc(func(w *ResponseWriter, r *Request) {
		chunk := bytes.Repeat([]byte("x"), 10000)
		for n := 0; n < size; n += len(chunk) {
			w.Write(chunk[:min(len(chunk), size-n)])
		}
	})
	_, addr := startTCP(t, h, Options{})
	c := newClient()
	closeIdle(t, c)
	for _, m := range []string{"GET", "HEAD"} {
		req, _ := http.NewRequest(m, "http://"+addr+"/", nil)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		n, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if m == "GET" && (n != size || len(resp.TransferEncoding) == 0) {
			t.Errorf("GET: %d bytes, TE %v; want %d chunked", n, resp.TransferEncoding, size)
		}
		if m == "HEAD" && n != 0 {
			t.Errorf("HEAD: %d body bytes", n)
		}
	}
}

func TestHTTP10(t *testing.T) {
	_, addr := startTCP(t, okHandler("ok"), Options{})
	c := dial(t, addr)
	br := bufio.NewReader(c)
	io.WriteString(c, "GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
	resp, body := readResponse(t, br, "GET")
	if body != "ok" || resp.Header.Get("Connection") != "keep-alive" {
		t.Fatalf("got %q, Connection %q", body, resp.Header.Get("Connection"))
	}
	io.WriteString(c, "GET / HTTP/1.0\r\n\r\n")
	readResponse(t, br, "GET")
	expectClosed(t, br)
}
