package server

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/simdedge/simdedge/internal/testenv"
	"github.com/simdedge/simdedge/internal/testnet"
	"github.com/simdedge/simdedge/server/metrics"
)

// testTimeout bounds every network wait in these tests.
const testTimeout = 10 * time.Second

// startTCP serves h on 127.0.0.1:0 and shuts the server down at cleanup.
func startTCP(t *testing.T, h Handler, o Options) (*Server, string) {
	t.Helper()
	return startEngine(t, h, o, testEngine)
}

// startEngine is startTCP on engine e.
func startEngine(t *testing.T, h Handler, o Options, e Engine) (*Server, string) {
	t.Helper()
	testenv.CheckGoroutines(t)
	o.Handler = h
	s := New(o)
	l := testnet.Listen(t)
	done := make(chan error, 1)
	go func() { done <- s.ServeTCP(l, e) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		s.Shutdown(ctx)
		if err := <-done; err != ErrServerClosed {
			t.Errorf("ServeTCP(%s) returned %v, want ErrServerClosed", e, err)
		}
	})
	return s, l.Addr().String()
}

// dial connects to addr with testTimeout as the connection's deadline.
func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	return testnet.Dial(t, addr, testTimeout)
}

// readResponse reads one response from br with net/http's reader, the
// independent reference, and returns it with its body read.
func readResponse(t *testing.T, br *bufio.Reader, method string) (*http.Response, string) {
	t.Helper()
	resp, err := http.ReadResponse(br, &http.Request{Method: method})
	if err != nil {
		t.Fatalf("reading response: %v", err)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading body: %v", err)
	}
	resp.Body.Close()
	return resp, string(b)
}

// expectClosed asserts that the server closes c (EOF or reset) without
// sending anything more.
func expectClosed(t *testing.T, br *bufio.Reader) {
	t.Helper()
	b, err := br.ReadByte()
	if err == nil {
		rest, _ := br.Peek(br.Buffered())
		t.Fatalf("connection still open; got %q", append([]byte{b}, rest...))
	}
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("connection not closed: %v", err)
	}
}

// okHandler answers body. It never blocks, so it is declared Inline: on
// the loop engine it runs on the loop.
func okHandler(body string) Handler {
	return Inline(HandlerFunc(func(w *ResponseWriter, r *Request) {
		w.AddHeader("Content-Type", "text/plain")
		w.WriteString(body)
	}))
}

func newClient() *http.Client {
	return &http.Client{Timeout: testTimeout, Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
}

func closeIdle(t *testing.T, c *http.Client) {
	t.Cleanup(func() { c.CloseIdleConnections() })
}

func crlf(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") }

func dial2(addr string) (interface{ Close() error }, error) {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return nil, err
	}
	// Accepted by the kernel backlog but never served: a read sees EOF.
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(time.Second))
	var b [1]byte
	if _, err := c.Read(b[:]); err != nil {
		return nil, err
	}
	return c, nil
}

func countingDialer(n *atomic.Int32) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		n.Add(1)
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}
}

func runCmd(name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	return string(out), err
}

// routerFunc is a Router for tests: route picks each request's plan.
type routerFunc func(*Request) *Plan

func (f routerFunc) Route(r *Request) *Plan { return f(r) }

func (f routerFunc) ServeEdge(w *ResponseWriter, r *Request) { f(r).ServeEdge(w, r) }

// routed is h as the action of a route counted into m.
func routed(m *metrics.Route, h Handler) Handler {
	p := &Plan{Metrics: m, Action: h}
	return routerFunc(func(*Request) *Plan { return p })
}
