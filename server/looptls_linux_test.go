//go:build linux

package server

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"testing"

	"github.com/simdedge/simdedge/server/edgetls"
)

// tlsRingRequests sends n sequential requests over one TLS connection to
// addr and returns how many io_uring_enter calls the process made meanwhile.
func tlsRingRequests(t *testing.T, p *pki, addr string, n int) int64 {
	t.Helper()
	c := dialTLS(t, p, addr)
	br := bufio.NewReader(c)
	before := ringEnters.Load()
	for i := range n {
		fmt.Fprintf(c, "GET /r%d HTTP/1.1\r\nHost: a.example\r\n\r\n", i)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		if want := fmt.Sprintf("path=/r%d tls=true", i); err != nil || string(b) != want {
			t.Fatalf("response %d: %q, %v; want %q", i, b, err, want)
		}
	}
	return ringEnters.Load() - before
}

// TestLoopTLSOnLoop: on the loop engine a TLS connection is served by the
// loop itself, its reads and writes through io_uring (SIMDEDGE_IO_URING=all),
// not by a goroutine; SIMDEDGE_LOOP_TLS=off serves it on a goroutine
// (design B, which makes no ring call).
func TestLoopTLSOnLoop(t *testing.T) {
	if testEngine != EngineLoop {
		t.Skip("the loop engine's TLS path")
	}
	needRing(t)
	const n = 20
	p := newPKI(t)
	t.Run("loop", func(t *testing.T) {
		t.Setenv(ringEnv, "all")
		_, addr := startTLS(t, pathHandler(), edgetls.Options{Certificates: certFiles(p.a)})
		if got := tlsRingRequests(t, p, addr, n); got < n {
			t.Errorf("%d io_uring_enter calls for %d TLS requests, want at least one per request (the loop serves them)", got, n)
		}
	})
	t.Run("goroutines", func(t *testing.T) {
		t.Setenv(ringEnv, "all")
		t.Setenv(loopTLSEnv, "off")
		_, addr := startTLS(t, pathHandler(), edgetls.Options{Certificates: certFiles(p.a)})
		if got := tlsRingRequests(t, p, addr, n); got != 0 {
			t.Errorf("%d io_uring_enter calls with SIMDEDGE_LOOP_TLS=off, want 0", got)
		}
	})
}
