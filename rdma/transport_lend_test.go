//go:build rdma && cgo

package rdma_test

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/simdedge/simdedge/rdma"
)

// TestClientDrivesQueue: one caller at a time reads the completion queue
// itself (the poller lends it when no call awaits a piece), and callers
// that overlap, time out or read rendezvous parts still get their
// responses: the queue is handed back whenever another call awaits one.
func TestClientDrivesQueue(t *testing.T) {
	needTransport(t)
	_, addr := startBackend(t, rdma.ListenConfig{Credits: 8, MessageSize: 4096}, echoHandler)
	c := dialClient(t, addr, rdma.DialOptions{Credits: 8, MessageSize: 4096})
	busyRequests(t, c, 100)
	if rdma.DrivenReads(c) == 0 {
		t.Error("no caller ever read the queue itself")
	}
	// Overlapping callers, some of whom give up.
	errs := make(chan error, 8)
	for g := range 8 {
		go func() {
			for i := range 25 {
				req := []byte(fmt.Sprintf("GET /g%d/%d HTTP/1.1\r\nHost: x\r\n\r\n", g, i))
				if g == 0 && i%5 == 0 {
					// A timeout too short to be met: the call gives up,
					// its late response is dropped.
					c.RoundTrip(req, time.Nanosecond, func([]byte, bool) error { return nil })
					continue
				}
				if _, err := wholeRoundTrip(c, req); err != nil {
					errs <- fmt.Errorf("caller %d request %d: %w", g, i, err)
					return
				}
			}
			errs <- nil
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	// Idle again: the poller takes the queue back and still serves.
	time.Sleep(20 * time.Millisecond)
	if resp, err := wholeRoundTrip(c, []byte("GET /last HTTP/1.1\r\nHost: x\r\n\r\n")); err != nil || !bytes.HasPrefix(resp, []byte("HTTP/1.1 200 ")) {
		t.Fatalf("after the idle period: %v %.60q", err, resp)
	}
}
