//go:build rdma && cgo

package rdma_test

import (
	"errors"
	"testing"
	"time"

	"github.com/simdedge/simdedge/rdma"
)

// A client that reads a rendezvous response part and never answers "done"
// holds the server's buffer: the server gives up after ReplyTimeout and
// closes the connection, instead of waiting forever.
func TestTransportReplyTimeout(t *testing.T) {
	needTransport(t)
	ml, addr := startBackend(t, rdma.ListenConfig{Credits: 8, MessageSize: 4096, ReplyTimeout: 200 * time.Millisecond}, echoHandler)
	c := dialClient(t, addr, rdma.DialOptions{Credits: 8, MessageSize: 4096})
	rdma.KeepDone(c)
	// The response goes in rendezvous parts (head and body may be two):
	// the first part the client does not acknowledge stalls the server's
	// Reply. Whether the client got all of it depends on how the server
	// flushed; what must hold is that the server gives up.
	if _, err := wholeRoundTrip(c, []byte("GET /size/100000 HTTP/1.1\r\nHost: x\r\n\r\n")); err != nil && !errors.Is(err, rdma.ErrConnLost) {
		t.Fatalf("rendezvous response: %v, want success or ErrConnLost", err)
	}
	waitFor(t, "the server to drop the connection", func() bool { return ml.Stats().Connected == 0 })
	waitFor(t, "the server to free its buffers", func() bool { s := ml.Stats(); return s.Open == 0 && s.Held == 0 })
	if _, err := wholeRoundTrip(c, []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")); !errors.Is(err, rdma.ErrConnLost) {
		t.Errorf("request after the server gave up: %v, want ErrConnLost", err)
	}
}

// Close from inside a part callback returns (it used to wait for the
// buffer the callback was reading), and the buffers are freed once the
// callback returns.
func TestClientCloseInPart(t *testing.T) {
	needTransport(t)
	ml, addr := startBackend(t, rdma.ListenConfig{Credits: 8, MessageSize: 4096}, echoHandler)
	c, err := rdma.Dial(addr, rdma.DialOptions{Credits: 8, MessageSize: 4096})
	if err != nil {
		t.Fatal(err)
	}
	returned := make(chan error, 1)
	go func() {
		returned <- c.RoundTrip([]byte("GET /x HTTP/1.1\r\nHost: x\r\n\r\n"), 10*time.Second, func(b []byte, more bool) error {
			closed := make(chan struct{})
			go func() { c.Close(); close(closed) }()
			select {
			case <-closed:
			case <-time.After(10 * time.Second):
				return errors.New("Close inside the callback did not return")
			}
			return c.Close() // and again, on this goroutine
		})
	}()
	select {
	case err := <-returned:
		if err != nil {
			t.Fatalf("RoundTrip: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("RoundTrip with Close in its callback did not return")
	}
	waitFor(t, "the client's buffers to be freed", func() bool { return c.Stats().Closed && c.Stats().Held == 0 })
	waitFor(t, "the server to see the close", func() bool { return ml.Stats().Connected == 0 })
	if err := c.Close(); err != nil {
		t.Errorf("Close after the callback: %v", err)
	}
}

// serverAllocsPerMessage is the server core's share of a request served in
// the same process: ServeMessages starts a goroutine per message, and the
// goroutine's closure is one allocation.
const serverAllocsPerMessage = 1

// RoundTrip allocates nothing in steady state (its call, channel and timer
// are reused).
func TestRoundTripAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	needTransport(t)
	_, addr := startBackend(t, rdma.ListenConfig{Credits: 8, MessageSize: 4096}, okHandler)
	c := dialClient(t, addr, rdma.DialOptions{Credits: 8, MessageSize: 4096})
	part := func(b []byte, more bool) error { return nil }
	for range 10 {
		if err := c.RoundTrip(benchReq, time.Second, part); err != nil {
			t.Fatal(err)
		}
	}
	// The counts are process-wide: the server's share is subtracted.
	allocs := testing.AllocsPerRun(200, func() {
		if err := c.RoundTrip(benchReq, time.Second, part); err != nil {
			t.Fatal(err)
		}
	})
	if clientAllocs := allocs - serverAllocsPerMessage; clientAllocs > 0.05 {
		t.Errorf("%.2f allocations per round trip beyond the server's %d", clientAllocs, serverAllocsPerMessage)
	}
}
