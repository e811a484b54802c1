//go:build rdma && cgo

package rdma_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/simdedge/simdedge/internal/testenv"
	"github.com/simdedge/simdedge/rdma"
	"github.com/simdedge/simdedge/server"
)

// needTransport skips (or fails under REQUIRE_RDMA) without the tcp
// provider on loopback.
func needTransport(tb testing.TB) {
	tb.Helper()
	f, err := rdma.OpenFabric(rdma.Options{Provider: "tcp", Node: loopback})
	testenv.NeedRDMA(tb, err)
	f.Close()
}

// backend serves h over the message transport on an ephemeral loopback
// port and stops at cleanup, checking that nothing is left open.
func startBackend(tb testing.TB, cfg rdma.ListenConfig, h server.Handler) (*rdma.MessageListener, string) {
	tb.Helper()
	cfg.Address = loopback + ":0"
	cfg.NoInline = cfg.NoInline || noInline
	ml, err := rdma.ListenMessages(cfg)
	if err != nil {
		tb.Fatalf("ListenMessages: %v", err)
	}
	s := server.New(server.Options{Handler: h, Limits: server.Limits{MaxBodyBytes: 128 << 20}})
	served := make(chan error, 1)
	go func() { served <- s.ServeMessages(ml) }()
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			tb.Errorf("Shutdown: %v", err)
		}
		<-served
		// A connection's buffers are freed by its poller after the
		// close, asynchronously: wait for them, so that the next test's
		// process-wide baseline (rdma.Stats) does not include them.
		for deadline := time.Now().Add(10 * time.Second); ml.Stats().Open > 0; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				tb.Errorf("connections still open 10 s after Shutdown: %+v", ml.Stats())
				break
			}
		}
	})
	return ml, ml.Addr().String()
}

func dialClient(tb testing.TB, addr string, o rdma.DialOptions) *rdma.Client {
	tb.Helper()
	c, err := rdma.Dial(addr, o)
	if err != nil {
		tb.Fatalf("Dial %s: %v", addr, err)
	}
	tb.Cleanup(func() { c.Close() })
	return c
}

// roundTrip returns the whole response.
func wholeRoundTrip(c *rdma.Client, req []byte) ([]byte, error) {
	var out []byte
	err := c.RoundTrip(req, 20*time.Second, func(b []byte, more bool) error {
		out = append(out, b...)
		return nil
	})
	return out, err
}

// echoHandler answers "<method> <target> <body length> <sha256 of body, 8 hex>",
// or, for /size/N, N bytes of a known pattern. It never blocks: the
// inline serve runs it on the poller (server.Inline).
var echoHandler = server.Inline(server.HandlerFunc(func(w *server.ResponseWriter, r *server.Request) {
	if n, ok := strings.CutPrefix(string(r.Target()), "/size/"); ok {
		size, _ := strconv.Atoi(n)
		w.Write(bodyPattern(size))
		return
	}
	body, err := r.BodyBytes()
	if err != nil {
		w.WriteHeader(server.StatusFor(err))
		return
	}
	sum := sha256.Sum256(body)
	fmt.Fprintf(w, "%s %s %d %x", r.Method(), r.Target(), len(body), sum[:4])
}))

func bodyPattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i>>10)
	}
	return b
}

func responseBody(t testing.TB, resp []byte) []byte {
	t.Helper()
	i := bytes.Index(resp, []byte("\r\n\r\n"))
	if i < 0 || !bytes.HasPrefix(resp, []byte("HTTP/1.1 200 ")) {
		t.Fatalf("not a 200 response: %.200q", resp)
	}
	body := resp[i+4:]
	if bytes.Contains(resp[:i], []byte("Transfer-Encoding: chunked")) {
		var out []byte
		for {
			j := bytes.Index(body, []byte("\r\n"))
			n, err := strconv.ParseInt(string(body[:j]), 16, 64)
			if err != nil {
				t.Fatalf("bad chunk size %q", body[:j])
			}
			if n == 0 {
				return out
			}
			out = append(out, body[j+2:j+2+int(n)]...)
			body = body[j+2+int(n)+2:]
		}
	}
	return body
}

func TestTransportRoundTrip(t *testing.T) {
	needTransport(t)
	_, addr := startBackend(t, rdma.ListenConfig{Credits: 8, MessageSize: 4096}, echoHandler)
	c := dialClient(t, addr, rdma.DialOptions{Credits: 8, MessageSize: 4096})
	resp, err := wholeRoundTrip(c, []byte("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(nil)
	if got, want := string(responseBody(t, resp)), fmt.Sprintf("GET /hello 0 %x", sum[:4]); got != want {
		t.Errorf("body %q, want %q", got, want)
	}
	body := []byte("some body bytes")
	req := fmt.Appendf(nil, "POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	resp, err = wholeRoundTrip(c, req)
	if err != nil {
		t.Fatal(err)
	}
	sum = sha256.Sum256(body)
	if got, want := string(responseBody(t, resp)), fmt.Sprintf("POST /p %d %x", len(body), sum[:4]); got != want {
		t.Errorf("body %q, want %q", got, want)
	}
	// A malformed request gets the server's 400, over the same connection.
	resp, err = wholeRoundTrip(c, []byte("GET / HTTP/1.1\r\nHost x\r\n\r\n"))
	if err != nil || !bytes.HasPrefix(resp, []byte("HTTP/1.1 400 ")) {
		t.Errorf("malformed request: %q, %v", resp, err)
	}
}

// TestTransportLargeResponses: responses larger than a message come by
// rendezvous (the client reads the server's region), whole or flushed in
// parts.
func TestTransportLargeResponses(t *testing.T) {
	needTransport(t)
	_, addr := startBackend(t, rdma.ListenConfig{Credits: 8, MessageSize: 4096}, echoHandler)
	c := dialClient(t, addr, rdma.DialOptions{Credits: 8, MessageSize: 4096})
	for _, n := range []int{4000, 4096, 100_000, 3 << 20} {
		resp, err := wholeRoundTrip(c, fmt.Appendf(nil, "GET /size/%d HTTP/1.1\r\nHost: x\r\n\r\n", n))
		if err != nil {
			t.Fatalf("%d bytes: %v", n, err)
		}
		if got := responseBody(t, resp); !bytes.Equal(got, bodyPattern(n)) {
			t.Fatalf("%d bytes: got %d bytes, not the pattern", n, len(got))
		}
	}
}

// TestTransportRendezvous64MiB: a 64 MiB request body goes by rendezvous
// (the server RDMA-READs the client's region) and arrives intact.
func TestTransportRendezvous64MiB(t *testing.T) {
	needTransport(t)
	_, addr := startBackend(t, rdma.ListenConfig{Credits: 8}, echoHandler)
	c := dialClient(t, addr, rdma.DialOptions{Credits: 8})
	body := bodyPattern(64 << 20)
	req := append(fmt.Appendf(nil, "PUT /big HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n", len(body)), body...)
	before := rdma.Stats()
	resp, err := wholeRoundTrip(c, req)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(body)
	if got, want := string(responseBody(t, resp)), fmt.Sprintf("PUT /big %d %x", len(body), sum[:4]); got != want {
		t.Errorf("body %q, want %q", got, want)
	}
	// Both rendezvous regions are freed once the exchange is over.
	deadline := time.Now().Add(5 * time.Second)
	for rdma.Stats().Regions > before.Regions && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if after := rdma.Stats(); after.Regions != before.Regions {
		t.Errorf("regions: %d before, %d after", before.Regions, after.Regions)
	}
}

// TestTransportPipelining: many concurrent requests on one connection with
// a small window: senders beyond the window wait, none is lost, each
// gets its own response. The handler holds requests until several are in
// flight at once, proving the window is used.
func TestTransportPipelining(t *testing.T) {
	needTransport(t)
	const credits, callers, each = 6, 24, 20
	var inHandler, maxInHandler atomic.Int32
	h := server.HandlerFunc(func(w *server.ResponseWriter, r *server.Request) {
		n := inHandler.Add(1)
		for {
			m := maxInHandler.Load()
			if n <= m || maxInHandler.CompareAndSwap(m, n) {
				break
			}
		}
		time.Sleep(time.Millisecond)
		inHandler.Add(-1)
		w.Write(r.Target())
	})
	ml, addr := startBackend(t, rdma.ListenConfig{Credits: credits, MessageSize: 2048}, h)
	c := dialClient(t, addr, rdma.DialOptions{Credits: credits, MessageSize: 2048})
	var ok atomic.Int32
	callersDo(t, callers, each, func(g, i int) error {
		target := fmt.Sprintf("/g%d/i%d", g, i)
		resp, err := wholeRoundTrip(c, []byte("GET "+target+" HTTP/1.1\r\nHost: x\r\n\r\n"))
		if err != nil {
			return err
		}
		if !bytes.HasSuffix(resp, []byte("\r\n\r\n"+target)) {
			return fmt.Errorf("request %s got %q", target, resp)
		}
		ok.Add(1)
		return nil
	})
	if ok.Load() != callers*each {
		t.Errorf("%d of %d requests answered", ok.Load(), callers*each)
	}
	// The client may have credits-1 requests at the server (one credit is
	// the control reserve), never more.
	if m := maxInHandler.Load(); m < 2 || m > credits-1 {
		t.Errorf("at most %d requests in handlers at once, want 2..%d", m, credits-1)
	}
	// The server core releases a request's slot after its last Reply, so
	// the client may hold the last response before the server's goroutine
	// has released its slot: wait for that, bounded, then look.
	waitFor(t, "the listener to release every slot", func() bool { st := ml.Stats(); return st.Held == 0 && st.Queued == 0 })
	if st := c.Stats(); st.Held != 0 || st.InFlight != 0 {
		t.Errorf("client after the run: %+v", st)
	}
}

var _ = errors.Is
var _ = io.EOF
