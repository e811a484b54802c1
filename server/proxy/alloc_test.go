package proxy

import (
	"io"
	"testing"

	"github.com/simdedge/simdedge/internal/testnet"
	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/internal/servetest"
	"github.com/simdedge/simdedge/server/upstream"
)

// TestProxyZeroAlloc: a warm keep-alive request proxied by the event
// loop (the loop-proxy run), or by ServeEdge on goroutines (the other
// runs), allocates nothing in the whole process, with
// the upstream policy on every request (selection, Done, the retry
// bookkeeping) and p2c with passive health, as with round robin. The
// origin is a simdedge server on the same engine; the client is a raw
// socket with preallocated buffers.
func TestProxyZeroAlloc(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	for _, b := range []upstream.Balance{upstream.RoundRobin, upstream.P2C} {
		t.Run(string(b), func(t *testing.T) {
			origin := server.New(server.Options{Handler: server.HandlerFunc(func(w *server.ResponseWriter, r *server.Request) {
				w.AddHeader("Content-Type", "text/plain")
				w.WriteString("ok\n")
			})})
			oaddr := servetest.Serve(t, origin, testEngine)
			// Two targets, one refusing: a warm request still only
			// selects and reports (the dead one gets ejected).
			addr, _ := startProxy(t, UpstreamOptions{Targets: []string{oaddr, testnet.RefusingAddr(t)},
				Policy: upstream.Options{Balance: b}}, server.Options{})
			c := testnet.Dial(t, addr, testTimeout)
			req := []byte("GET /healthz HTTP/1.1\r\nHost: localhost\r\nUser-Agent: test\r\nAccept: */*\r\n\r\n")
			buf := make([]byte, 4096)
			var size int
			for range 20 { // warm: pools, ejection of the dead target
				size = len(testnet.Exchange(t, c, req, buf))
			}
			allocs := testing.AllocsPerRun(200, func() {
				if _, err := c.Write(req); err != nil {
					t.Fatal(err)
				}
				if _, err := io.ReadFull(c, buf[:size]); err != nil {
					t.Fatal(err)
				}
			})
			if allocs != 0 {
				t.Errorf("%v allocations per proxied request on the loop, want 0", allocs)
			}
		})
	}
}
