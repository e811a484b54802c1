package server

import (
	"bufio"
	"io"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"
)

// splitHandler serves /i/* inline (on the loop engine, on the loop) and
// everything else as a plain handler (the loop hands those connections
// to goroutines), so that both kinds of connection can fill a server.
type splitHandler struct{}

func (splitHandler) ServeEdge(w *ResponseWriter, r *Request) {
	w.WriteString("ok " + string(r.Target()))
}

func (splitHandler) InlineHandler(r *Request) Handler {
	if strings.HasPrefix(string(r.Target()), "/i/") {
		return HandlerFunc(splitHandler{}.ServeEdge)
	}
	return nil
}

// dialFrom connects to addr from the local address ip (another 127.x
// address simulates another client), skipping where it cannot bind.
func dialFrom(t *testing.T, ip, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{Timeout: testTimeout, LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		if ip != "127.0.0.1" {
			t.Skipf("cannot connect from %s: %v", ip, err)
		}
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(testTimeout))
	t.Cleanup(func() { c.Close() })
	return c
}

// get sends GET target on c and returns the body of the answer.
func get(t *testing.T, c net.Conn, br *bufio.Reader, target string) string {
	t.Helper()
	if _, err := io.WriteString(c, "GET "+target+" HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	_, body := readResponse(t, br, "GET")
	return body
}

// TestReclaimIdleForNewClient: one address fills every slot with idle
// keep-alive connections; a new client from another address is still
// answered within a second, because the server closes an idle connection
// to admit it (before: it waited for the idle timeout, 60 s here). On the
// loop engine the idle connections are on the loop, or handed off to
// goroutines, which the loop must reclaim too.
func TestReclaimIdleForNewClient(t *testing.T) {
	const slots = 8
	// target "" fills the server with connections that never send a
	// request: once silent for reclaimFreshAfter they count as idle too.
	for _, tc := range []struct{ name, target string }{{"inline", "/i/x"}, {"handed-off", "/g/x"}, {"fresh", ""}} {
		t.Run(tc.name, func(t *testing.T) {
			_, addr := startTCP(t, splitHandler{}, Options{Limits: Limits{MaxConns: slots, MaxConnsPerIP: -1}})
			var held []net.Conn
			for range slots {
				c := dialFrom(t, "127.0.0.1", addr)
				if tc.target == "" {
					held = append(held, c)
					continue
				}
				if body := get(t, c, bufio.NewReader(c), tc.target); body != "ok "+tc.target {
					t.Fatalf("filling: %q", body)
				}
				held = append(held, c)
			}
			if tc.target == "" {
				time.Sleep(reclaimFreshAfter)
			}
			c := dialFrom(t, "127.0.0.2", addr)
			c.SetDeadline(time.Now().Add(time.Second))
			if body := get(t, c, bufio.NewReader(c), "/i/new"); body != "ok /i/new" {
				t.Fatalf("new client: %q", body)
			}
			// Exactly one of the idle connections was closed for it.
			closed := 0
			for _, h := range held {
				h.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
				var b [1]byte
				if _, err := h.Read(b[:]); err != nil {
					if ne, ok := err.(net.Error); !ok || !ne.Timeout() {
						closed++
					}
				}
			}
			if closed != 1 {
				t.Fatalf("%d idle connections closed, want 1", closed)
			}
		})
	}
}

// TestFullOfBusyWaits: when no connection is idle, a new one waits for a
// slot (nothing busy is closed for it) and is served once one frees.
func TestFullOfBusyWaits(t *testing.T) {
	entered, release := make(chan struct{}, 2), make(chan struct{})
	// A plain handler: on the loop engine its connections are handed
	// off, busy on their goroutines.
	h := HandlerFunc(func(w *ResponseWriter, r *Request) {
		if string(r.Target()) == "/block" {
			entered <- struct{}{}
			<-release
		}
		w.WriteString("ok " + string(r.Target()))
	})
	_, addr := startTCP(t, h, Options{Limits: Limits{MaxConns: 2, MaxConnsPerIP: -1}})
	var busy []net.Conn
	for range 2 {
		c := dialFrom(t, "127.0.0.1", addr)
		io.WriteString(c, "GET /block HTTP/1.1\r\nHost: x\r\n\r\n")
		busy = append(busy, c)
		select {
		case <-entered:
		case <-time.After(testTimeout):
			t.Fatal("handler not entered")
		}
	}
	n := dialFrom(t, "127.0.0.2", addr)
	io.WriteString(n, "GET /new HTTP/1.1\r\nHost: x\r\n\r\n")
	n.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	var b [1]byte
	if _, err := n.Read(b[:]); err == nil {
		t.Fatal("served while every slot was busy")
	}
	close(release)
	for _, c := range busy {
		if _, body := readResponse(t, bufio.NewReader(c), "GET"); body != "ok /block" {
			t.Fatalf("busy connection: %q", body)
		}
	}
	// The busy connections are idle now: one is closed for the new one.
	n.SetReadDeadline(time.Now().Add(testTimeout))
	if _, body := readResponse(t, bufio.NewReader(n), "GET"); body != "ok /new" {
		t.Fatalf("got %q", body)
	}
}

// TestMaxConnsPerIP: beyond MaxConnsPerIP an address's connections are
// closed at accept, while another address is served; a closed connection
// gives its share back.
func TestMaxConnsPerIP(t *testing.T) {
	s, addr := startTCP(t, splitHandler{}, Options{Limits: Limits{MaxConnsPerIP: 2}})
	var mine []net.Conn
	for range 2 {
		c := dialFrom(t, "127.0.0.1", addr)
		if body := get(t, c, bufio.NewReader(c), "/i/a"); body != "ok /i/a" {
			t.Fatalf("within the cap: %q", body)
		}
		mine = append(mine, c)
	}
	over := dialFrom(t, "127.0.0.1", addr)
	io.WriteString(over, "GET /i/over HTTP/1.1\r\nHost: x\r\n\r\n")
	expectClosed(t, bufio.NewReader(over))
	other := dialFrom(t, "127.0.0.2", addr)
	if body := get(t, other, bufio.NewReader(other), "/i/b"); body != "ok /i/b" {
		t.Fatalf("other address: %q", body)
	}
	mine[0].Close()
	lo := netip.MustParseAddr("127.0.0.1")
	for deadline := time.Now().Add(testTimeout); s.ips.count(lo) >= 2; {
		if time.Now().After(deadline) {
			t.Fatal("the closed connection's share was not given back")
		}
		time.Sleep(10 * time.Millisecond)
	}
	again := dialFrom(t, "127.0.0.1", addr)
	if body := get(t, again, bufio.NewReader(again), "/i/c"); body != "ok /i/c" {
		t.Fatalf("after a close: %q", body)
	}
}

func TestDefaultMaxConnsPerIP(t *testing.T) {
	for _, tc := range []struct{ conns, want int }{{10000, 1000}, {0, 0}, {2, 2}, {500, 100}, {1500, 150}} {
		if got := DefaultMaxConnsPerIP(tc.conns); got != tc.want {
			t.Errorf("DefaultMaxConnsPerIP(%d) = %d, want %d", tc.conns, got, tc.want)
		}
	}
	a, _ := clientKey(&net.TCPAddr{IP: net.ParseIP("2001:db8::1:2:3:4")})
	b, _ := clientKey(&net.TCPAddr{IP: net.ParseIP("2001:db8::5:6:7:8")})
	if a != b {
		t.Errorf("one /64 counted as two clients: %v %v", a, b)
	}
	if v4, _ := clientKey(&net.TCPAddr{IP: net.ParseIP("::ffff:10.0.0.1")}); v4 != netip.MustParseAddr("10.0.0.1") {
		t.Errorf("mapped IPv4: %v", v4)
	}
}

// TestFirstRequestBudget: a new connection must finish its first head
// within ReadHeader of its accept; a first byte does not restart the
// clock (before, the head got ReadHeader again from its first byte).
func TestFirstRequestBudget(t *testing.T) {
	const rh = 2 * time.Second
	_, addr := startTCP(t, okHandler("ok"), Options{Timeouts: Timeouts{ReadHeader: rh}})
	c := dial(t, addr)
	start := time.Now()
	time.Sleep(rh * 9 / 10)
	io.WriteString(c, "GET / HTTP/1.1\r\n")
	// Past ReadHeader from the accept (and past the loop's deadline
	// scan, a quarter of it), well within ReadHeader of the first byte.
	time.Sleep(time.Until(start.Add(rh * 3 / 2)))
	io.WriteString(c, "Host: x\r\n\r\n")
	br := bufio.NewReader(c)
	b, err := br.ReadByte()
	if err == nil {
		rest, _ := br.Peek(br.Buffered())
		t.Fatalf("first head finished after ReadHeader was served: %q", append([]byte{b}, rest...))
	}
}
