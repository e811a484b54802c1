package server

import (
	"io"
	"testing"

	"github.com/simdedge/simdedge/internal/testnet"
)

// TestZeroAllocKeepAlive asserts that a warm keep-alive connection serves a
// static response without a single allocation in the whole process (server
// goroutine included: AllocsPerRun counts every malloc). The client is a raw
// socket with preallocated buffers, so it allocates nothing itself.
func TestZeroAllocKeepAlive(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	h := HandlerFunc(func(w *ResponseWriter, r *Request) {
		w.AddHeader("Content-Type", "text/plain")
		w.WriteString("ok\n")
	})
	_, addr := startTCP(t, h, Options{})
	if allocs := keepAliveAllocs(t, addr); allocs != 0 {
		t.Errorf("%v allocations per request on a warm keep-alive connection, want 0", allocs)
	}
}

// keepAliveAllocs sends the same GET over one keep-alive connection to addr
// and returns the process's allocations per request once warm.
func keepAliveAllocs(t *testing.T, addr string) float64 {
	t.Helper()
	c := dial(t, addr)
	req := []byte("GET /healthz HTTP/1.1\r\nHost: localhost\r\nUser-Agent: test\r\nAccept: */*\r\n\r\n")
	// Learn the response length once (it is fixed: Date has a fixed width).
	buf := make([]byte, 4096)
	size := len(testnet.Exchange(t, c, req, buf))
	return testing.AllocsPerRun(200, func() {
		if _, err := c.Write(req); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(c, buf[:size]); err != nil {
			t.Fatal(err)
		}
	})
}

// TestZeroAllocPipelinedBody covers the body path: a Content-Length body
// read whole by BodyBytes (a view) and three pipelined requests per write.
func TestZeroAllocPipelinedBody(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	h := HandlerFunc(func(w *ResponseWriter, r *Request) {
		b, _ := r.BodyBytes()
		w.Write(b)
	})
	_, addr := startTCP(t, h, Options{})
	c := dial(t, addr)
	one := "POST /x HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5\r\n\r\nhello"
	req := []byte(one + one + one)
	if _, err := c.Write(req); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 8192)
	size := 0
	for size == 0 || size%3 != 0 || !endsWithHello3(buf[:size]) {
		n, err := c.Read(buf[size:])
		if err != nil {
			t.Fatal(err)
		}
		size += n
	}
	allocs := testing.AllocsPerRun(200, func() {
		c.Write(req)
		if _, err := io.ReadFull(c, buf[:size]); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per batch, want 0", allocs)
	}
}

func endsWithHello3(b []byte) bool {
	n := 0
	for i := 0; i+5 <= len(b); i++ {
		if string(b[i:i+5]) == "hello" {
			n++
		}
	}
	return n == 3
}
