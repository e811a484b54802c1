package proxy

import (
	"net"
	"net/http"
	"syscall"
	"testing"
	"time"

	"github.com/simdedge/simdedge/internal/testenv"
	"github.com/simdedge/simdedge/server"
)

// fullListener returns the address of a loopback socket that listens with
// a backlog of 0 and never accepts, its accept queue filled: Linux drops
// further SYNs, so a dial to it hangs until its timeout, a black hole
// without leaving loopback.
func fullListener(t *testing.T) string {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Skipf("socket: %v", err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Listen(fd, 0); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	addr := (&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: sa.(*syscall.SockaddrInet4).Port}).String()
	// Fill the accept queue (backlog 0 holds one connection; dial a few).
	for range 3 {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err != nil {
			break // the queue is full
		}
		t.Cleanup(func() { c.Close() })
	}
	c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
	if err == nil {
		c.Close()
		t.Skip("kernel accepted beyond the backlog; cannot build a black hole here")
	}
	return addr
}

func TestConnectTimeout(t *testing.T) {
	testenv.CheckGoroutines(t)
	hole := fullListener(t)
	addr, _ := startProxy(t, UpstreamOptions{Targets: []string{hole}, ConnectTimeout: 300 * time.Millisecond}, server.Options{})
	start := time.Now()
	resp, err := client(t).Get("http://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if el := time.Since(start); resp.StatusCode != http.StatusGatewayTimeout || el < 250*time.Millisecond || el > 5*time.Second {
		t.Errorf("got %d after %v, want 504 after ~300ms", resp.StatusCode, el)
	}
}
