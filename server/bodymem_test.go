package server

import (
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/simdedge/simdedge/internal/testnet"
)

// Header-only floods (issue 18, item 1): clients that announce a body and
// send none must cost the server memory for what they sent, not for what
// they announced.

const (
	// floodClients is how many header-only clients each case opens.
	floodClients = 200
	// floodPerConn is the heap a header-only connection may add, client
	// side included. The issue allows 64 KiB; a connection needs about
	// 25 KiB on the goroutine engine (read buffer 4 KiB, the first body
	// buffer bodyBufMin, the conn) and less on the loop, so half the
	// issue's figure leaves room for noise and still fails the code that
	// sized the buffer from Content-Length (60 KB and 10 MB below).
	floodPerConn = 32 << 10
	// floodSettle lets the server reach its blocking read after the
	// last client's head arrived (or the handler was entered).
	floodSettle = 300 * time.Millisecond
)

// heapLive is the heap in use by live objects, after a full collection.
func heapLive() uint64 {
	runtime.GC()
	runtime.GC() // the second one also empties sync.Pool's victim cache
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// rssKiB is the process's resident set (VmRSS), 0 where /proc is absent.
// It is logged, not asserted: it also counts goroutine stacks and pages the
// runtime has not yet returned, which vary from run to run.
func rssKiB() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return n
		}
	}
	return 0
}

func TestHeaderOnlyFloodMemory(t *testing.T) {
	for _, cl := range []int{60000, 10_000_000} {
		t.Run(fmt.Sprintf("content-length-%d", cl), func(t *testing.T) {
			var entered atomic.Int32
			h := Inline(HandlerFunc(func(w *ResponseWriter, r *Request) {
				entered.Add(1)
				b, err := r.BodyBytes()
				if err != nil {
					w.WriteHeader(StatusFor(err))
					return
				}
				fmt.Fprintf(w, "%d", len(b))
			}))
			_, addr := startTCP(t, h, Options{})
			before, rssBefore := heapLive(), rssKiB()
			head := fmt.Sprintf("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n", cl)
			conns := make([]net.Conn, 0, floodClients)
			defer func() {
				for _, c := range conns {
					c.Close()
				}
			}()
			for range floodClients {
				c, err := net.DialTimeout("tcp", addr, testTimeout)
				if err != nil {
					t.Fatal(err)
				}
				conns = append(conns, c)
				if _, err := io.WriteString(c, head); err != nil {
					t.Fatal(err)
				}
			}
			// A body up to loopBodyMax is waited for on the loop, which
			// runs no handler until it is complete.
			if !(testEngine == EngineLoop && cl <= loopBodyMax) {
				testnet.Poll(testTimeout, func() bool { return entered.Load() >= floodClients })
				if n := entered.Load(); n < floodClients {
					t.Fatalf("%d of %d requests reached the handler", n, floodClients)
				}
			}
			time.Sleep(floodSettle)
			after, rssAfter := heapLive(), rssKiB()
			grown := int64(after) - int64(before)
			t.Logf("%d header-only clients announcing %d bytes: heap %+d KiB (%d B per connection), RSS %+d KiB",
				floodClients, cl, grown>>10, grown/floodClients, rssAfter-rssBefore)
			if limit := int64(floodClients * floodPerConn); grown > limit {
				t.Errorf("heap grew by %d KiB, want at most %d KiB (%d KiB per connection)",
					grown>>10, limit>>10, floodPerConn>>10)
			}
			// The connections still work: a client that sends its body
			// now is answered.
			c := conns[0]
			c.SetDeadline(time.Now().Add(testTimeout))
			if _, err := io.WriteString(c, strings.Repeat("x", cl)); err != nil {
				t.Fatal(err)
			}
			var buf [512]byte
			n, _ := io.ReadAtLeast(c, buf[:], 12)
			if got := string(buf[:n]); !strings.HasPrefix(got, "HTTP/1.1 200 ") {
				t.Errorf("answer after the body: %q", got)
			}
		})
	}
}
