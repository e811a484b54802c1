package netstack

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"sync/atomic"
	"testing"
	"time"

	"github.com/simdedge/simdedge/internal/testenv"
	"github.com/simdedge/simdedge/server"
)

// echo answers with method, target, body length and a digest of the body
// (or the whole body when asked for with /raw).
var echo = server.HandlerFunc(func(w *server.ResponseWriter, r *server.Request) {
	b, err := r.BodyBytes()
	if err != nil {
		w.WriteHeader(413)
		return
	}
	if string(r.Target()) == "/raw" {
		w.Write(b)
		return
	}
	fmt.Fprintf(w, "%s %s %d", r.Method(), r.Target(), len(b))
})

// serve runs a server.Server on the pair's listener until the test ends.
func serve(t testing.TB, p *pair, h server.Handler, o server.Options) *server.Server {
	t.Helper()
	o.Handler = h
	srv := server.New(o)
	done := make(chan error, 1)
	go func() { done <- srv.ServeStream(p.srv.Listener()) }()
	t.Cleanup(func() {
		srv.Close()
		if err := <-done; !errors.Is(err, server.ErrServerClosed) {
			t.Errorf("ServeStream: %v", err)
		}
	})
	return srv
}

func readResp(t testing.TB, br *bufio.Reader) (*http.Response, string) {
	t.Helper()
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("reading response: %v", err)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading body: %v", err)
	}
	return resp, string(b)
}

// expectClosed reads until EOF (or a reset), failing if data or a
// timeout comes first.
func expectClosed(t testing.TB, c net.Conn, br *bufio.Reader) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(testTimeout))
	if b, err := br.ReadByte(); err == nil {
		t.Fatalf("connection still open: read %q", b)
	} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatal("connection not closed within the test timeout")
	}
}

func TestPipelinedPair(t *testing.T) {
	testenv.CheckGoroutines(t)
	p := newPair(t, Config{}, nil)
	serve(t, p, echo, server.Options{})
	c := p.mustDial(t)
	// Both requests in one write: the server must answer both, in order.
	io.WriteString(c, "GET /one HTTP/1.1\r\nHost: x\r\n\r\nPOST /two HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc")
	br := bufio.NewReader(c)
	for _, want := range []string{"GET /one 0", "POST /two 3"} {
		resp, body := readResp(t, br)
		if resp.StatusCode != 200 || body != want {
			t.Errorf("got %d %q, want 200 %q", resp.StatusCode, body, want)
		}
	}
}

// httpClient is net/http's client dialing through the pair's client stack.
func httpClient(p *pair) *http.Client {
	return &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) { return p.dial(ctx) },
	}, Timeout: testTimeout}
}

func TestNetHTTPKeepAliveAndLargeBodies(t *testing.T) {
	testenv.CheckGoroutines(t)
	p := newPair(t, Config{}, nil)
	serve(t, p, echo, server.Options{})
	c := httpClient(p)
	defer c.CloseIdleConnections()

	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	var reused atomic.Int32
	trace := &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) {
		if i.Reused {
			reused.Add(1)
		}
	}}
	const rounds = 3
	for i := range rounds {
		req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace),
			"POST", "http://198.18.0.1:8080/raw", bytes.NewReader(big))
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("round %d: %v", i, err)
		}
		got, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || !bytes.Equal(got, big) {
			t.Fatalf("round %d: echoed %d bytes (err %v), want the %d sent", i, len(got), err, len(big))
		}
	}
	if n := reused.Load(); n != rounds-1 {
		t.Errorf("%d of %d requests reused the connection, want %d", n, rounds, rounds-1)
	}
}

// The strict parser's rejections travel over the userspace stack like over
// kernel TCP: the status, then the connection closes.
func TestStrictRejections(t *testing.T) {
	p := newPair(t, Config{}, nil)
	var ran atomic.Int32
	serve(t, p, server.HandlerFunc(func(w *server.ResponseWriter, r *server.Request) { ran.Add(1) }), server.Options{})
	for _, tc := range []struct{ name, req string }{
		{"obs-fold", "GET / HTTP/1.1\r\nHost: x\r\nX: a\r\n b\r\n\r\n"},
		{"bad Content-Length", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: +3\r\n\r\nabc"},
		{"CL and TE", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := p.mustDial(t)
			io.WriteString(c, tc.req)
			br := bufio.NewReader(c)
			resp, _ := readResp(t, br)
			if resp.StatusCode != 400 || !resp.Close {
				t.Errorf("got %d close=%v, want 400 and Connection: close", resp.StatusCode, resp.Close)
			}
			expectClosed(t, c, br)
		})
	}
	if n := ran.Load(); n != 0 {
		t.Errorf("handler ran %d times on rejected requests", n)
	}
}

// Shutdown wakes an idle keep-alive connection through SetReadDeadline,
// which must work across goroutines on gonet's connections.
func TestShutdownWakesIdle(t *testing.T) {
	testenv.CheckGoroutines(t)
	p := newPair(t, Config{}, nil)
	srv := serve(t, p, echo, server.Options{})
	c := p.mustDial(t)
	br := bufio.NewReader(c)
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	readResp(t, br)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v (the idle connection was not woken)", err)
	}
	expectClosed(t, c, br)
	if _, err := p.srv.Listener().Accept(); !errors.Is(err, net.ErrClosed) {
		t.Errorf("Accept after shutdown: %v, want net.ErrClosed", err)
	}
}

// The server's idle timeout closes a silent connection: read deadlines
// fire on the userspace stack.
func TestIdleTimeout(t *testing.T) {
	const idle = 200 * time.Millisecond
	p := newPair(t, Config{}, nil)
	serve(t, p, echo, server.Options{Timeouts: server.Timeouts{Idle: idle}})
	c := p.mustDial(t)
	br := bufio.NewReader(c)
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	readResp(t, br)
	start := time.Now()
	expectClosed(t, c, br)
	if el := time.Since(start); el < idle*3/4 {
		t.Errorf("closed after %v, before the idle timeout %v", el, idle)
	}
}

// Close resets live connections and leaves no goroutine of gVisor's or
// ours behind.
func TestCloseNoLeak(t *testing.T) {
	testenv.CheckGoroutines(t)
	p := newPair(t, Config{}, nil)
	srv := server.New(server.Options{Handler: echo})
	done := make(chan error, 1)
	go func() { done <- srv.ServeStream(p.srv.Listener()) }()
	c := p.mustDial(t)
	br := bufio.NewReader(c)
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	readResp(t, br)
	if err := p.srv.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if !errors.Is(err, net.ErrClosed) {
			t.Errorf("ServeStream after Stack.Close: %v, want an error wrapping net.ErrClosed", err)
		}
	case <-time.After(testTimeout):
		t.Fatal("ServeStream did not return after Stack.Close")
	}
	srv.Close()
	expectClosed(t, c, br)
	p.srv.Deliver(make([]byte, 64)) // after Close: dropped, no panic
}
