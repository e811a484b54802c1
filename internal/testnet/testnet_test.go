package testnet

import (
	"bufio"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestListenClosesAtCleanup: the listener accepts on loopback while the
// test runs, and it and the connection Dial made are closed once the
// cleanups have run.
func TestListenClosesAtCleanup(t *testing.T) {
	var l net.Listener
	var c net.Conn
	t.Run("use", func(t *testing.T) {
		l = Listen(t)
		c = Dial(t, l.Addr().String(), 5*time.Second)
		if _, ok := c.(*net.TCPConn); !ok {
			t.Fatalf("Dial returned a %T", c)
		}
	})
	if _, err := l.Accept(); err == nil {
		t.Fatal("Accept succeeded after cleanup; want the listener closed")
	}
	if _, err := c.Write([]byte("x")); err == nil {
		t.Fatal("Write succeeded after cleanup; want Dial's connection closed")
	}
}

// TestPoll: Poll reports a condition that comes true, and gives up on one
// that never does once its bound has passed.
func TestPoll(t *testing.T) {
	n := 0
	if _, ok := Poll(5*time.Second, func() bool { n++; return n == 3 }); !ok || n != 3 {
		t.Fatalf("Poll: ok=%v after %d tries, want true after 3", ok, n)
	}
	const bound = 20 * time.Millisecond
	took, ok := Poll(bound, func() bool { return false })
	if ok || took < bound {
		t.Fatalf("Poll of a false condition: ok=%v after %v, want false after at least %v", ok, took, bound)
	}
}

// TestH2Transport: h2c without a TLS config, h2 over TLS only with one.
func TestH2Transport(t *testing.T) {
	if p := H2Transport(nil).Protocols; !p.UnencryptedHTTP2() || p.HTTP1() || p.HTTP2() {
		t.Errorf("h2c transport protocols %v, want UnencryptedHTTP2 only", p)
	}
	if p := H2Transport(&tls.Config{}).Protocols; !p.HTTP2() || p.HTTP1() || p.UnencryptedHTTP2() {
		t.Errorf("TLS transport protocols %v, want HTTP2 only", p)
	}
}

// TestFreeAddr: nothing accepts on the address returned.
func TestFreeAddr(t *testing.T) {
	if c, err := net.DialTimeout("tcp", FreeAddr(t), 5*time.Second); err == nil {
		c.Close()
		t.Fatal("FreeAddr accepted a connection")
	}
}

// TestRefusingAddr: the address refuses connections, and no listener can
// take its port while the test runs (a closed listener's port could be
// taken, which made a "dead" upstream answer in one test).
func TestRefusingAddr(t *testing.T) {
	addr := RefusingAddr(t)
	if c, err := net.DialTimeout("tcp", addr, 5*time.Second); err == nil {
		c.Close()
		t.Fatal("RefusingAddr accepted a connection")
	} else if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("dial: %v, want connection refused", err)
	}
	if l, err := net.Listen("tcp", addr); err == nil {
		l.Close()
		t.Fatalf("a listener took %s", addr)
	}
}

// TestTrickle: the trickled units reach the server, the status it answers
// with comes back with the time it took; a server that never answers
// makes Trickle give up after its limit with an error.
func TestTrickle(t *testing.T) {
	const every = 10 * time.Millisecond
	l := Listen(t)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				buf := make([]byte, 64)
				got := 0
				for got < len("head")+3 { // the head, then three units
					n, err := c.Read(buf)
					if err != nil {
						return
					}
					got += n
				}
				c.Write([]byte("HTTP/1.1 408 Request Timeout\r\n\r\n"))
			}()
		}
	}()
	status, took, err := Trickle(t, l.Addr().String(), "head", "x", every, 5*time.Second)
	if err != nil || status != 408 || took < 2*every {
		t.Errorf("Trickle: %d after %v, %v; want 408 after at least %v", status, took, err, 2*every)
	}

	// The kernel accepts into the backlog: nobody reads or answers.
	silent := Listen(t)
	const limit = 100 * time.Millisecond
	start := time.Now()
	if status, _, err := Trickle(t, silent.Addr().String(), "head", "x", every, limit); err == nil || time.Since(start) < limit {
		t.Errorf("Trickle to a silent server: %d, %v after %v; want an error after %v", status, err, time.Since(start), limit)
	}
}

// TestPipeline: the requests go out in one write and the replies come
// back in order, with their statuses and bodies; the reader is left at
// what follows them.
func TestPipeline(t *testing.T) {
	addr := answerRequests(t, func(c net.Conn, i int, req *http.Request) {
		body := req.URL.Path
		fmt.Fprintf(c, "HTTP/1.1 %d X\r\nContent-Length: %d\r\n\r\n%s", 200+i, len(body), body)
	})
	c := Dial(t, addr, 5*time.Second)
	br := bufio.NewReader(c)
	got := Pipeline(t, c, br, []string{"GET /a HTTP/1.1\r\nHost: x\r\n\r\n", "GET /b HTTP/1.1\r\nHost: x\r\n\r\n"})
	if len(got) != 2 || got[0] != (Reply{200, "/a"}) || got[1] != (Reply{201, "/b"}) {
		t.Fatalf("Pipeline: %v, want [{200 /a} {201 /b}]", got)
	}
	if got := Pipeline(t, c, br, []string{"GET /c HTTP/1.1\r\nHost: x\r\n\r\n"}); got[0] != (Reply{202, "/c"}) {
		t.Fatalf("Pipeline on the same reader: %v, want [{202 /c}]", got)
	}
}

// TestExchange: a response written in three pieces comes back whole, and
// the next exchange on the connection starts at the next response (a
// single Read would have returned the head alone).
func TestExchange(t *testing.T) {
	addr := answerRequests(t, func(c net.Conn, _ int, req *http.Request) {
		body := req.URL.Path + "-body"
		for _, part := range []string{fmt.Sprintf("HTTP/1.1 200 OK\r\nconTent-length: %d\r\n", len(body)), "\r\n" + body[:2], body[2:]} {
			c.Write([]byte(part))
			time.Sleep(5 * time.Millisecond)
		}
	})
	c := Dial(t, addr, 5*time.Second)
	buf := make([]byte, 512)
	for _, p := range []string{"/a", "/bc"} {
		got := string(Exchange(t, c, []byte("GET "+p+" HTTP/1.1\r\nHost: x\r\n\r\n"), buf))
		if !strings.HasPrefix(got, "HTTP/1.1 200 OK\r\n") || !strings.HasSuffix(got, "\r\n\r\n"+p+"-body") {
			t.Fatalf("Exchange %s: %q", p, got)
		}
	}
}

// answerRequests accepts one connection on a new listener and calls
// answer for each request read on it (i counts them from 0), until the
// connection ends; it returns the listener's address.
func answerRequests(t *testing.T, answer func(c net.Conn, i int, req *http.Request)) string {
	l := Listen(t)
	go func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		br := bufio.NewReader(c)
		for i := 0; ; i++ {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			answer(c, i, req)
		}
	}()
	return l.Addr().String()
}
