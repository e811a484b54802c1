package server

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/simdedge/simdedge/internal/testnet"
	"github.com/simdedge/simdedge/server/edgetls"
)

// These tests cover TLS connections served by the event loop itself
// (looptls_linux.go): inline handlers, so that requests are answered on
// the loop, and a hand-off to a goroutine in the middle of a connection.
// They run on every engine (the goroutine engine must behave the same).

// dialTLS opens a TLS 1.3 connection to addr for a.example.
func dialTLS(t *testing.T, p *pki, addr string) *tls.Conn {
	t.Helper()
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: testTimeout}, "tcp", addr,
		&tls.Config{ServerName: "a.example", RootCAs: p.ca.Pool, MinVersion: tls.VersionTLS13})
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(testTimeout))
	t.Cleanup(func() { c.Close() })
	return c
}

// pathHandler answers the request's target, inline.
func pathHandler() Handler {
	return Inline(HandlerFunc(func(w *ResponseWriter, r *Request) {
		fmt.Fprintf(w, "path=%s tls=%v", r.Target(), r.TLS())
	}))
}

// TestLoopTLSPipelined: many requests in one TLS write are answered in
// order, each over TLS.
func TestLoopTLSPipelined(t *testing.T) {
	p := newPKI(t)
	_, addr := startTLS(t, pathHandler(), edgetls.Options{Certificates: certFiles(p.a)})
	c := dialTLS(t, p, addr)
	const n = 100
	reqs := make([]string, n)
	for i := range n {
		reqs[i] = fmt.Sprintf("GET /r%d HTTP/1.1\r\nHost: a.example\r\n\r\n", i)
	}
	for i, r := range testnet.Pipeline(t, c, bufio.NewReader(c), reqs) {
		if want := fmt.Sprintf("path=/r%d tls=true", i); r.Body != want {
			t.Fatalf("response %d: %q; want %q", i, r.Body, want)
		}
	}
}

// bigBody is the pattern of the large bodies: position-dependent bytes, so
// that a lost, repeated or reordered record shows.
func bigBody(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i>>11)
	}
	return b
}

// TestLoopTLSLargeResponse: responses of several MB to a client that
// starts reading late (the loop's output blocks and waits for EPOLLOUT)
// arrive whole, twice on one connection.
func TestLoopTLSLargeResponse(t *testing.T) {
	const size = 6 << 20
	body := bigBody(size)
	p := newPKI(t)
	_, addr := startTLS(t, Inline(HandlerFunc(func(w *ResponseWriter, r *Request) {
		w.Write(body)
	})), edgetls.Options{Certificates: certFiles(p.a)})
	c := dialTLS(t, p, addr)
	br := bufio.NewReader(c)
	for i := range 2 {
		if _, err := c.Write([]byte("GET /big HTTP/1.1\r\nHost: a.example\r\n\r\n")); err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond) // the server's writes fill the socket
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("response %d: %v", i, err)
		}
		b, err := io.ReadAll(resp.Body)
		if err != nil || !bytes.Equal(b, body) {
			t.Fatalf("response %d: %d bytes (%v), want %d equal bytes", i, len(b), err, size)
		}
	}
}

// getInlineHandler serves GET inline and everything else on a goroutine
// (Inliner's nil): a POST with a large body hands the connection off in
// the middle of its life.
type getInlineHandler struct{ Handler }

func (h getInlineHandler) InlineHandler(r *Request) Handler {
	if string(r.Method()) == "GET" {
		return h.Handler
	}
	return nil
}

// TestLoopTLSHandoffBody: a request inline, then a large POST body read by
// a goroutine handler (the connection handed off with its tls.Conn), then
// more requests on the same connection.
func TestLoopTLSHandoffBody(t *testing.T) {
	const size = 3 << 20
	body := bigBody(size)
	p := newPKI(t)
	h := HandlerFunc(func(w *ResponseWriter, r *Request) {
		if string(r.Method()) == "GET" {
			fmt.Fprintf(w, "get %s", r.Target())
			return
		}
		b, err := io.ReadAll(r.Body())
		fmt.Fprintf(w, "post %d %v %v", len(b), bytes.Equal(b, body), err)
	})
	_, addr := startTLS(t, getInlineHandler{h}, edgetls.Options{Certificates: certFiles(p.a)})
	c := dialTLS(t, p, addr)
	br := bufio.NewReader(c)
	roundTrip := func(req []byte, want string) {
		t.Helper()
		if _, err := c.Write(req); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		if err != nil || string(b) != want {
			t.Fatalf("got %q, %v; want %q", b, err, want)
		}
	}
	roundTrip([]byte("GET /one HTTP/1.1\r\nHost: a.example\r\n\r\n"), "get /one")
	post := fmt.Appendf(nil, "POST /up HTTP/1.1\r\nHost: a.example\r\nContent-Length: %d\r\n\r\n", size)
	roundTrip(append(post, body...), fmt.Sprintf("post %d true <nil>", size))
	roundTrip([]byte("GET /two HTTP/1.1\r\nHost: a.example\r\n\r\n"), "get /two")
}

// TestLoopTLSCloseNotify: a client's close_notify after its request gets
// the answer, then the server's close_notify (a clean EOF, not a
// truncation); and an idle client's close_notify closes the connection
// the same way.
func TestLoopTLSCloseNotify(t *testing.T) {
	p := newPKI(t)
	_, addr := startTLS(t, pathHandler(), edgetls.Options{Certificates: certFiles(p.a)})

	c := dialTLS(t, p, addr)
	if _, err := c.Write([]byte("GET /bye HTTP/1.1\r\nHost: a.example\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	if err := c.CloseWrite(); err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(c) // EOF only on close_notify
	if err != nil || !strings.HasSuffix(string(b), "path=/bye tls=true") {
		t.Fatalf("got %q, %v", b, err)
	}

	c = dialTLS(t, p, addr)
	br := bufio.NewReader(c)
	c.Write([]byte("GET /a HTTP/1.1\r\nHost: a.example\r\n\r\n"))
	if resp, err := http.ReadResponse(br, nil); err != nil {
		t.Fatal(err)
	} else {
		io.Copy(io.Discard, resp.Body)
	}
	if err := c.CloseWrite(); err != nil {
		t.Fatal(err)
	}
	if rest, err := io.ReadAll(br); err != nil || len(rest) != 0 {
		t.Fatalf("after close_notify: %q, %v; want a clean EOF", rest, err)
	}
}

// TestLoopTLSGarbageRecord: a corrupted record after the handshake ends
// the connection (crypto/tls's alert, then the close) and the server goes
// on serving.
func TestLoopTLSGarbageRecord(t *testing.T) {
	p := newPKI(t)
	_, addr := startTLS(t, pathHandler(), edgetls.Options{Certificates: certFiles(p.a)})
	raw := testnet.Dial(t, addr, testTimeout)
	c := tls.Client(raw, &tls.Config{ServerName: "a.example", RootCAs: p.ca.Pool})
	if err := c.Handshake(); err != nil {
		t.Fatal(err)
	}
	// An application-data record whose ciphertext cannot authenticate.
	raw.Write([]byte{23, 3, 3, 0, 32, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32})
	_, err := io.ReadAll(c)
	var ne net.Error
	if err == nil || errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("read after a bad record: %v, want the connection ended", err)
	}
	c2 := dialTLS(t, p, addr)
	c2.Write([]byte("GET /ok HTTP/1.1\r\nHost: a.example\r\n\r\n"))
	if resp, err := http.ReadResponse(bufio.NewReader(c2), nil); err != nil || resp.StatusCode != 200 {
		t.Fatalf("next connection: %v", err)
	}
}

// TestLoopTLSShutdownHandshake: Shutdown does not wait for the handshake
// timeout of a client that stalls in its handshake.
func TestLoopTLSShutdownHandshake(t *testing.T) {
	p := newPKI(t)
	s := New(Options{Handler: pathHandler()})
	st, err := edgetls.New(edgetls.Options{Certificates: certFiles(p.a), HandshakeTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	l := testnet.Listen(t)
	done := make(chan error, 1)
	go func() {
		done <- s.ServeTLS(l, testEngine, TLSOptions{Config: st.TLSConfig(), HandshakeTimeout: st.HandshakeTimeout()})
	}()
	c := dial(t, l.Addr().String())
	hello := clientHello(t)
	c.Write(hello[:len(hello)/2])
	time.Sleep(50 * time.Millisecond) // the server is in the handshake
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	start := time.Now()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v after %v, want nil (the stalled handshake ended)", err, time.Since(start))
	}
	if err := <-done; err != ErrServerClosed {
		t.Fatalf("ServeTLS returned %v", err)
	}
}
