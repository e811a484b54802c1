package server

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/quic-go/quic-go"

	"github.com/simdedge/simdedge/internal/h3test"
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
	first := h3test.Dial(t, addr, h3RawTLS(p), nil)
	if status, _, err := h3test.Request(t, first, nil, h3test.Get("GET", "/")...); status != "200" {
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
			status, _, err := h3test.Request(t, c, nil, h3test.Get("GET", "/")...)
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

// TestH3ConnNoReadBuffer: the conn that anchors a QUIC connection's
// requests (h3conn.c) has no read buffer, since no byte passes through
// it; before the fix each held the 4 KiB of a TCP connection's, unused.
// A stream connection's conn still gets one after an anchor was released.
func TestH3ConnNoReadBuffer(t *testing.T) {
	h := HandlerFunc(func(w *ResponseWriter, r *Request) { w.WriteString("ok") })
	s, p, addr := startH3(t, h, Options{}, HTTP3Options{})
	c := h3test.Dial(t, addr, h3RawTLS(p), nil)
	if status, _, err := h3test.Request(t, c, nil, h3test.Get("GET", "/")...); status != "200" {
		t.Fatalf("%q %v", status, err)
	}
	anchors, held := 0, 0
	s.mu.Lock()
	for cn := range s.conns {
		if _, ok := cn.st.(h3connStream); ok {
			anchors++
			held += cap(cn.rbuf)
		}
	}
	s.mu.Unlock()
	if anchors != 1 || held != 0 {
		t.Fatalf("%d QUIC connections hold %d bytes of read buffer, want 1 holding none", anchors, held)
	}
	c.CloseWithError(0, "")
	a := newAnchorConn(s, &fuzzStream{})
	a.release()
	if tc := newConn(s, &fuzzStream{}); len(tc.rbuf) != initialReadBuf {
		t.Errorf("a stream connection's conn has a read buffer of %d bytes, want %d", len(tc.rbuf), initialReadBuf)
	} else {
		tc.release()
	}
}

// BenchmarkH3ConnAnchor: the memory a new QUIC connection's anchor conn
// takes (B/op; none goes back to the pool, as on a server whose open
// connections grow). The fake stream and its address are 3 of the
// allocations and 182 of the bytes (Go 1.26, linux/amd64).
func BenchmarkH3ConnAnchor(b *testing.B) {
	s := New(Options{Handler: okHandler("")})
	held := make([]*conn, 0, 1024)
	b.ReportAllocs()
	for b.Loop() {
		if len(held) == cap(held) {
			held = held[:0] // the rest are the GC's
		}
		held = append(held, newAnchorConn(s, &fuzzStream{}))
	}
}
