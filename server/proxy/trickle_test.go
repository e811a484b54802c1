package proxy

import (
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/simdedge/simdedge/internal/testnet"
	"github.com/simdedge/simdedge/server"
)

// A body trickled to a proxy route (issue 18, item 3) is answered 408 once
// the server's minimum body rate is missed, on every engine and proxy
// path, and the upstream connection it held is released.

const (
	trickleMin    = 1000                   // bytes/s, the server's BodyMinRate
	trickleWindow = 500 * time.Millisecond // its BodyRateWindow
	trickleEvery  = 100 * time.Millisecond // 10 B/s, far below the minimum
	trickleFor    = 8 * time.Second        // the server must answer long before
)

func TestTrickledBodyProxied408(t *testing.T) {
	var active atomic.Int32
	o := startOrigin(t, headerEcho, func(s *http.Server) {
		s.ConnState = func(c net.Conn, st http.ConnState) {
			switch st {
			case http.StateNew:
				active.Add(1)
			case http.StateClosed, http.StateHijacked:
				active.Add(-1)
			}
		}
	})
	addr, _ := startProxy(t, UpstreamOptions{Name: "u", Targets: []string{o.addr}},
		server.Options{Timeouts: server.Timeouts{Idle: time.Minute, BodyMinRate: trickleMin, BodyRateWindow: trickleWindow}})
	for _, tc := range []struct{ name, head, unit string }{
		// Waited for whole before forwarding (on the loop with its
		// own proxy; by BodyBytes on goroutines).
		{"small content-length", "POST /t HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n", "x"},
		// Streamed to the upstream as it arrives.
		{"large content-length", "POST /t HTTP/1.1\r\nHost: x\r\nContent-Length: 200000\r\n\r\n", "x"},
		{"chunked", "POST /t HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n", "1\r\nx\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, took, err := testnet.Trickle(t, addr, tc.head, tc.unit, trickleEvery, trickleFor)
			if err != nil {
				t.Fatalf("no answer while trickling for %v: %v", trickleFor, err)
			}
			if status != 408 {
				t.Errorf("status %d, want 408", status)
			}
			if took < trickleWindow {
				t.Errorf("answered after %v, before the %v window", took, trickleWindow)
			}
			if _, ok := testnet.Poll(testTimeout, func() bool { return active.Load() == 0 }); !ok {
				t.Errorf("%d upstream connections still open after the 408", active.Load())
			}
		})
	}
}
