package server

import (
	"io"
	"testing"

	"github.com/simdedge/simdedge/server/edgetls"
)

// tlsAllocsPerRequest is what a warm TLS keep-alive request costs the
// whole process, client included: crypto/tls allocates once per record
// read on each side (readFromUntil's atLeastReader escapes, Go 1.26), and
// nothing else may. The goroutine engine pays the same.
const tlsAllocsPerRequest = 2

// TestLoopTLSAllocs: a warm TLS keep-alive connection allocates nothing
// beyond crypto/tls's own reads (on the loop: the wire hands crypto/tls one
// record at a time, so no Read is made only to learn that it would block).
func TestLoopTLSAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	if raceEnabled {
		t.Skip("the race detector drops sync.Pool items (crypto/tls pools its record buffers)")
	}
	p := newPKI(t)
	_, addr := startTLS(t, Inline(HandlerFunc(func(w *ResponseWriter, r *Request) {
		w.AddHeader("Content-Type", "text/plain")
		w.WriteString("ok\n")
	})), edgetls.Options{Certificates: certFiles(p.a)})
	c := dialTLS(t, p, addr)
	req := []byte("GET /healthz HTTP/1.1\r\nHost: localhost\r\nUser-Agent: test\r\nAccept: */*\r\n\r\n")
	if _, err := c.Write(req); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4096)
	size, err := c.Read(buf)
	if err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(500, func() {
		if _, err := c.Write(req); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(c, buf[:size]); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > tlsAllocsPerRequest {
		t.Errorf("%v allocations per TLS request (client included), want at most %d", allocs, tlsAllocsPerRequest)
	}
}
