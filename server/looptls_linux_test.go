//go:build linux

package server

import (
	"bufio"
	"bytes"
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

// FuzzTLSWire: the wire's record framing over untrusted bytes arriving in
// arbitrary pieces and read in arbitrary sizes. What crypto/tls is handed
// is exactly what arrived, in order, and no Read crosses the end of a
// record (by the headers' lengths); nothing panics.
func FuzzTLSWire(f *testing.F) {
	f.Add([]byte{23, 3, 3, 0, 3, 'a', 'b', 'c', 23, 3, 3, 0, 1, 'd'}, uint8(3), uint8(7))
	f.Add([]byte{22, 3, 1, 0xff, 0xff, 1, 2}, uint8(1), uint8(1))
	f.Add([]byte{}, uint8(0), uint8(0))
	f.Fuzz(func(t *testing.T, stream []byte, piece, readSize uint8) {
		w := &tlsWire{in: make([]byte, tlsInBuf)}
		var got []byte
		rest := stream
		buf := make([]byte, int(readSize)+1)
		// Record ends, from the headers, independently of the wire.
		ends := map[int]bool{}
		for pos := 0; pos+tlsRecordHeader <= len(stream); {
			pos += tlsRecordHeader + (int(stream[pos+3])<<8 | int(stream[pos+4]))
			ends[pos] = true
		}
		for steps := 0; steps < 4*len(stream)+8; steps++ {
			if len(rest) > 0 {
				room := w.room()
				n := copy(room[:min(len(room), int(piece)+1)], rest)
				w.iw += n
				rest = rest[n:]
			}
			for {
				n, err := w.Read(buf)
				if err == errWouldBlock {
					break
				}
				if err != nil || n == 0 {
					t.Fatalf("Read: %d, %v", n, err)
				}
				for i := len(got) + 1; i < len(got)+n; i++ {
					if ends[i] {
						t.Fatalf("a Read of %d bytes at %d crosses the record end at %d", n, len(got), i)
					}
				}
				got = append(got, buf[:n]...)
			}
			if len(rest) == 0 && !w.buffered() {
				break
			}
		}
		// Everything is handed over but a trailing partial header,
		// which stays in the wire until the rest of it comes.
		left := len(stream) - len(got)
		if !bytes.HasPrefix(stream, got) || left >= tlsRecordHeader {
			t.Fatalf("handed %d of %d bytes (a prefix: %v)", len(got), len(stream), bytes.HasPrefix(stream, got))
		}
		if left > 0 && len(got) > 0 && !ends[len(got)] {
			t.Fatalf("stopped at %d of %d bytes, not at a record start", len(got), len(stream))
		}
	})
}
