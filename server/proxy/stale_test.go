package proxy

import (
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/simdedge/simdedge/internal/testenv"
	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/upstream"
)

// staleConns is how many upstream connections the test pools before
// they all go stale: more than any fixed count of pooled retries.
const staleConns = 8

// TestStaleResendWithoutRetries: with retries off, a request whose
// pooled upstream connection was closed by the upstream is still resent,
// once, on a new connection (issue 27: the goroutine proxy answered 502s
// with `retries.attempts: 0` once an nginx backend's keep-alive timeout
// had closed more pooled connections than it retried on), on both proxy
// paths. Two upstreams: one that ends every connection after its first
// response (the request on a reused connection is read, then the
// connection closed, as when a keep-alive timeout races the request),
// and one whose idle timeout closes them while they sit in the pool.
func TestStaleResendWithoutRetries(t *testing.T) {
	t.Run("closes-after-one", func(t *testing.T) {
		var dropped atomic.Int32
		addr := rawOrigin(t, func(c net.Conn, i int, req *http.Request) bool {
			if i > 0 {
				dropped.Add(1)
				return false
			}
			time.Sleep(20 * time.Millisecond) // the fill's requests overlap
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nfresh")
			return true
		})
		testStaleResend(t, addr, 0)
		if dropped.Load() == 0 {
			t.Error("no pooled connection was dropped by the origin: the resend was not exercised")
		}
	})
	t.Run("idle-timeout", func(t *testing.T) {
		o := startOrigin(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			time.Sleep(20 * time.Millisecond)
			io.WriteString(w, "fresh")
		}), func(s *http.Server) { s.IdleTimeout = 50 * time.Millisecond })
		testStaleResend(t, o.addr, 200*time.Millisecond)
	})
}

// testStaleResend fills the pool with staleConns connections (concurrent
// requests), waits idle, then sends sequential GETs, DELETEs and POSTs
// (a small POST goes on a fresh connection: it wrote nothing) that must
// all be answered by the origin.
func testStaleResend(t *testing.T, oaddr string, idle time.Duration) {
	testenv.CheckGoroutines(t)
	addr, _ := startProxy(t, UpstreamOptions{Targets: []string{oaddr},
		Policy: upstream.Options{Retry: upstream.RetryPolicy{Attempts: upstream.NoRetries}}}, server.Options{})
	fill := func() {
		var wg sync.WaitGroup
		for range staleConns {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c := client(t)
				req, _ := http.NewRequest("GET", "http://"+addr+"/fill", nil)
				resp, b := get(t, c, req)
				if resp.StatusCode != 200 || string(b) != "fresh" {
					t.Errorf("fill: %d %q", resp.StatusCode, b)
				}
				c.CloseIdleConnections()
			}()
		}
		wg.Wait()
	}
	fill()
	time.Sleep(idle)
	c := client(t)
	for i, method := range []string{"GET", "DELETE", "HEAD", "GET", "PUT", "GET"} {
		req, _ := http.NewRequest(method, "http://"+addr+"/", nil)
		resp, b := get(t, c, req)
		want := "fresh"
		if method == "HEAD" {
			want = ""
		}
		if resp.StatusCode != 200 || string(b) != want {
			t.Fatalf("request %d (%s) after the pool went stale: %d %q", i, method, resp.StatusCode, b)
		}
	}
}
