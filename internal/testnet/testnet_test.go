package testnet

import (
	"crypto/tls"
	"net"
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
