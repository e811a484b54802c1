// Package testnet holds the network set-up that tests across the module
// share: a loopback listener that closes at cleanup, net/http's HTTP/2
// client transports (h2c and h2 over TLS) and a bounded poll.
//
// It imports nothing of package server, so that server's own internal
// tests can use it as well as everything above server; the helpers that
// start a server.Server live in server/internal/servetest, which only
// packages above server may import.
package testnet

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Loopback is the address every test listener binds: the kernel picks the
// port, and no traffic leaves the machine.
const Loopback = "127.0.0.1:0"

// Listen returns a TCP listener on Loopback that is closed at cleanup (a
// no-op when the server serving it has closed it first).
func Listen(tb testing.TB) net.Listener {
	tb.Helper()
	l, err := net.Listen("tcp", Loopback)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { l.Close() })
	return l
}

// H2Transport is net/http's HTTP/2 client (x/net/http2's, bundled): h2c
// with prior knowledge when cfg is nil, else h2 over TLS only, so that a
// server that fell back to HTTP/1.1 fails the test instead of passing it.
func H2Transport(cfg *tls.Config) *http.Transport {
	var p http.Protocols
	if cfg == nil {
		p.SetUnencryptedHTTP2(true)
	} else {
		p.SetHTTP2(true)
	}
	return &http.Transport{Protocols: &p, TLSClientConfig: cfg}
}

// pollEvery is how often Poll and WaitFor test their condition: short
// next to the bounds tests give, long enough not to spin a shared CPU.
const pollEvery = 2 * time.Millisecond

// Poll tests cond until it holds or within passes, and returns how long
// that took and whether it held. For tests that assert on the time itself
// (health checks that must act within their interval).
func Poll(within time.Duration, cond func() bool) (time.Duration, bool) {
	start := time.Now()
	for {
		if cond() {
			return time.Since(start), true
		}
		if time.Since(start) >= within {
			return time.Since(start), false
		}
		time.Sleep(pollEvery)
	}
}

// WaitFor fails tb (naming what it waited for) unless cond holds within
// the bound.
func WaitFor(tb testing.TB, within time.Duration, what string, cond func() bool) {
	tb.Helper()
	if _, ok := Poll(within, cond); !ok {
		tb.Fatalf("timed out after %v waiting for %s", within, what)
	}
}

// FreeAddr returns a loopback address nobody listens on: a port the
// kernel picked a moment ago, closed again, for a server under test to
// listen on. It is not a dead upstream: once closed, the port is free for
// any process to take, and tests in parallel packages do (a proxy test
// once found another test's proxy answering on its "dead" target); use
// RefusingAddr for that.
func FreeAddr(tb testing.TB) string {
	tb.Helper()
	l, err := net.Listen("tcp", Loopback)
	if err != nil {
		tb.Fatal(err)
	}
	a := l.Addr().String()
	l.Close()
	return a
}

// RefusingAddr returns a loopback address that refuses connections for
// the rest of the test: a TCP socket bound to a port the kernel picked,
// never listening, and closed at cleanup. The kernel answers a connection
// to it with a reset, as to any closed port, while the bound socket keeps
// every other socket from taking the port (it does not set SO_REUSEADDR).
func RefusingAddr(tb testing.TB) string {
	tb.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		tb.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		tb.Fatal(err)
	}
	in4, ok := sa.(*syscall.SockaddrInet4)
	if !ok {
		tb.Fatalf("testnet: bound socket has address %T", sa)
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(in4.Port))
}

// Dial connects to addr within d, sets the connection's deadline d from
// now so that no read or write of the test can hang, and closes the
// connection at cleanup.
func Dial(tb testing.TB, addr string, d time.Duration) net.Conn {
	tb.Helper()
	c, err := net.DialTimeout("tcp", addr, d)
	if err != nil {
		tb.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(d))
	tb.Cleanup(func() { c.Close() })
	return c
}

// Trickle is a slow client: it sends head to addr, then unit every
// `every` until the server answers or limit passes, and returns the
// answer's status and how long after the head it came (0 and an error if
// none came within limit). Each write and the wait for the answer are
// bounded by limit, so a server that neither reads nor answers cannot
// hang the test.
func Trickle(tb testing.TB, addr, head, unit string, every, limit time.Duration) (status int, took time.Duration, err error) {
	tb.Helper()
	c := Dial(tb, addr, limit)
	defer c.Close()
	start := time.Now()
	c.SetWriteDeadline(start.Add(limit))
	if _, err := io.WriteString(c, head); err != nil {
		tb.Fatal(err)
	}
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		tk := time.NewTicker(every)
		defer tk.Stop()
		for time.Since(start) < limit {
			select {
			case <-stop:
				return
			case <-tk.C:
			}
			c.SetWriteDeadline(time.Now().Add(limit))
			if _, err := io.WriteString(c, unit); err != nil {
				return
			}
		}
	}()
	defer func() { close(stop); <-done }()
	c.SetReadDeadline(start.Add(limit))
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return 0, 0, err
	}
	if _, err := fmt.Sscanf(line, "HTTP/1.1 %d", &status); err != nil {
		return 0, 0, fmt.Errorf("testnet: status line %q", line)
	}
	return status, time.Since(start), nil
}

// Reply is one HTTP/1.1 response as Pipeline read it.
type Reply struct {
	Status int
	Body   string
}

// Pipeline writes reqs to w in one write and reads as many responses from
// br (a reader over the same connection, which the caller may read on
// after) with net/http's reader, in order. It fails tb at the first
// response that does not parse or whose body does not read whole.
func Pipeline(tb testing.TB, w io.Writer, br *bufio.Reader, reqs []string) []Reply {
	tb.Helper()
	var all []byte
	for _, r := range reqs {
		all = append(all, r...)
	}
	if _, err := w.Write(all); err != nil {
		tb.Fatal(err)
	}
	out := make([]Reply, len(reqs))
	for i := range reqs {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			tb.Fatalf("response %d: %v", i, err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			tb.Fatalf("response %d: body: %v", i, err)
		}
		out[i] = Reply{resp.StatusCode, string(b)}
	}
	return out
}

// Exchange writes req to c and reads exactly one HTTP/1.1 response with a
// Content-Length into buf, returning it whole. Zero-allocation tests use it
// to learn the size of the response they then read with io.ReadFull: one
// Read can return part of a response, or the tail of one and the next,
// and a size learnt that way would leave the timed loop waiting for bytes
// that never come. It fails tb on a response that does not fit buf, has
// no Content-Length or ends early.
func Exchange(tb testing.TB, c net.Conn, req, buf []byte) []byte {
	tb.Helper()
	if _, err := c.Write(req); err != nil {
		tb.Fatal(err)
	}
	n, end := 0, -1
	for end < 0 {
		if n == len(buf) {
			tb.Fatalf("testnet: response head longer than %d bytes", len(buf))
		}
		m, err := c.Read(buf[n:])
		n += m
		if err != nil {
			tb.Fatalf("testnet: reading a response head: %v", err)
		}
		end = bytes.Index(buf[:n], []byte("\r\n\r\n"))
	}
	end += 4
	size := -1
	for _, line := range bytes.Split(buf[:end], []byte("\r\n")) {
		k, v, ok := bytes.Cut(line, []byte(":"))
		if ok && strings.EqualFold(string(k), "Content-Length") {
			cl, err := strconv.Atoi(strings.TrimSpace(string(v)))
			if err != nil || cl < 0 {
				tb.Fatalf("testnet: bad Content-Length %q", v)
			}
			size = end + cl
		}
	}
	if size < 0 {
		tb.Fatalf("testnet: response without Content-Length: %q", buf[:end])
	}
	if size > len(buf) {
		tb.Fatalf("testnet: response of %d bytes does not fit %d", size, len(buf))
	}
	if n > size {
		tb.Fatalf("testnet: %d bytes past the response (one request, one response)", n-size)
	}
	if _, err := io.ReadFull(c, buf[n:size]); err != nil {
		tb.Fatalf("testnet: reading a response body: %v", err)
	}
	return buf[:size]
}
