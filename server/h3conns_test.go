package server

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/quic-go/quic-go"

	"github.com/simdedge/simdedge/server/metrics"
)

// TestH3MaxConns: a listener's QUIC connections count against
// Limits.MaxConns (its HTTP/3 socket's own slots, as each Serve call has
// its own). At the limit a new connection is refused at its first packet
// with CONNECTION_REFUSED and counted as a max_conns refusal; once a
// connection ends, its slot serves a new one. Before the fix QUIC
// connections were not counted, and the second was served.
func TestH3MaxConns(t *testing.T) {
	set := metrics.NewSet()
	h := HandlerFunc(func(w *ResponseWriter, r *Request) { w.WriteString("ok") })
	// MaxConnsPerIP off: only MaxConns may refuse.
	so := Options{Limits: Limits{MaxConns: 1, MaxConnsPerIP: -1}, Metrics: set}
	_, p, addr := startH3(t, h, so, HTTP3Options{})
	first := h3RawDial(t, addr, h3RawTLS(p), nil)
	if status, _, err := h3RawRequest(t, first, nil, h3RawGet("GET", "/")...); status != "200" {
		t.Fatalf("first connection: %q %v", status, err)
	}
	dial := func() (*quic.Conn, error) {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		return quic.DialAddr(ctx, addr, h3RawTLS(p), nil)
	}
	c, err := dial()
	var te *quic.TransportError
	if !errors.As(err, &te) || te.ErrorCode != quic.ConnectionRefused || !te.Remote {
		if c != nil {
			c.CloseWithError(0, "")
		}
		t.Fatalf("a connection over max_conns: %v, want CONNECTION_REFUSED from the server", err)
	}
	var refused uint64
	for _, l := range set.Listeners() {
		refused += l.Totals().Refused[metrics.RefusedMaxConns]
	}
	// One per Initial packet refused: a client's first flight may take
	// two (a post-quantum key share makes its ClientHello that large).
	if refused == 0 {
		t.Error("no max_conns refusal counted")
	}
	first.CloseWithError(0, "")
	deadline := time.Now().Add(testTimeout)
	for {
		c, err := dial()
		if err == nil {
			status, _, err := h3RawRequest(t, c, nil, h3RawGet("GET", "/")...)
			c.CloseWithError(0, "")
			if status != "200" {
				t.Fatalf("connection after the first ended: %q %v", status, err)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the slot did not come back after the first connection ended: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
