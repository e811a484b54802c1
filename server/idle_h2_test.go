package server

import (
	"bytes"
	"context"
	"crypto/tls"
	"net"
	"testing"
	"time"

	"golang.org/x/net/http2"

	"github.com/simdedge/simdedge/server/edgetls"
)

// idleH2Conns is how many idle HTTP/2 connections TestIdleH2ConnMemory
// holds.
const idleH2Conns = 200

// idleH2Budget and idleH2CBudget are the most an idle HTTP/2 connection
// (no stream open, nothing buffered) may cost the process, server and
// test client together, over TLS and over h2c. Before idle connections gave back their frame buffers and the
// loop's TLS input buffer (docs/decisions/0049-small-idle-connections.md)
// the server alone kept 64 KiB (frame writer), 16 KiB (frame reader) and,
// over TLS on the loop, 18 KiB (ciphertext input) for each: 130 KiB per
// connection over TLS and 96 over h2c on the loop, in this test. Since:
// 21-23 KiB over TLS on the loop and 31-35 on goroutines (both sides'
// crypto/tls state, the reader goroutine's stack on goroutines), 9-12
// over h2c. A read buffer kept alive by the last frame's views (given
// back to its pool, which drops it at the next collection) adds 16 KiB:
// 41-49 KiB over TLS, 27-29 over h2c.
const (
	idleH2Budget  = 40 << 10
	idleH2CBudget = 16 << 10
)

// TestIdleH2ConnMemory: HTTP/2 connections, over TLS and h2c, that served
// one request and then wait past parkAfter cost at most idleH2Budget (idleH2CBudget) each,
// and each is then served again.
func TestIdleH2ConnMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	if raceEnabled {
		t.Skip("the race detector's shadow memory is counted too")
	}
	t.Run("tls", func(t *testing.T) {
		p := newPKI(t)
		_, addr := startTLSWith(t, h2Handler(), Options{}, edgetls.Options{Certificates: certFiles(p.a), ALPN: []string{"h2", "http/1.1"}})
		idleH2Memory(t, idleH2Budget, func() net.Conn {
			tc := tls.Client(dial(t, addr), &tls.Config{RootCAs: p.ca.Pool, ServerName: "a.example", NextProtos: []string{"h2"}})
			if err := tc.Handshake(); err != nil {
				t.Fatal(err)
			}
			return tc
		})
	})
	t.Run("h2c", func(t *testing.T) {
		_, addr := startH2C(t, h2Handler(), Options{})
		idleH2Memory(t, idleH2CBudget, func() net.Conn { return dial(t, addr) })
	})
}

func idleH2Memory(t *testing.T, budget int, dial func() net.Conn) {
	get := func(h *h2raw, id uint32) {
		t.Helper()
		h.headers(id, true, h.block("GET", "/"))
		if status, code := h.waitStream(id); status != "200" {
			t.Fatalf("stream %d: status %q, reset %v", id, status, code)
		}
	}
	warm := startH2Raw(t, dial())
	get(warm, 1)
	warm.c.Close()
	heap0, stack0 := processMem()
	before := heap0 + stack0
	hs := make([]*h2raw, idleH2Conns)
	for i := range hs {
		hs[i] = startH2Raw(t, dial())
		hs[i].c.SetDeadline(time.Now().Add(testTimeout))
		get(hs[i], 1)
	}
	// Past parkAfter (and a margin: the lazy deadline) the connections
	// give their buffers back.
	time.Sleep(parkAfter + parkAfter/2)
	per := 0
	for try := 0; try < 20; try++ {
		if per = (processBytes() - before) / idleH2Conns; per <= budget {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	heap, stack := processMem()
	t.Logf("%s engine: %d bytes per idle HTTP/2 connection (server and client; heap %d, stacks %d)", testEngine, per, (heap-heap0)/idleH2Conns, (stack-stack0)/idleH2Conns)
	if per > budget {
		t.Errorf("%d bytes per idle HTTP/2 connection, want at most %d", per, budget)
	}
	// Served after the wait, in reverse order (connections take other
	// connections' buffers), and again at once.
	for i := len(hs) - 1; i >= 0; i-- {
		get(hs[i], 3)
		get(hs[i], 5)
	}
}

// TestIdleH2SplitFrame: a frame whose first bytes come before an idle
// HTTP/2 connection's buffers would be given back (parkAfter) and the rest
// after is read whole, as is one that starts after they were given back
// and pauses in the middle.
func TestIdleH2SplitFrame(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	h2Both(t, h2Handler(), Options{}, func(t *testing.T, dial h2Dialer) {
		h := dial(t)
		h.c.SetDeadline(time.Now().Add(testTimeout))
		h.headers(1, true, h.block("GET", "/"))
		if status, _ := h.waitStream(1); status != "200" {
			t.Fatalf("stream 1: status %q", status)
		}
		for i, id := range []uint32{3, 5} {
			var b bytes.Buffer
			fr := http2.NewFramer(&b, nil)
			fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: h.block("GET", "/"), EndStream: true, EndHeaders: true})
			frame := b.Bytes()
			if i == 1 {
				time.Sleep(parkAfter + parkAfter/2) // given back
			}
			send(t, h.c, string(frame[:5]))
			time.Sleep(parkAfter + parkAfter/2) // mid-frame
			send(t, h.c, string(frame[5:]))
			if status, code := h.waitStream(id); status != "200" {
				t.Fatalf("stream %d: status %q, reset %v", id, status, code)
			}
		}
	})
}

// TestIdleH2Timeout: an idle HTTP/2 connection that gave its buffers back
// still ends with GOAWAY at its Idle timeout, not before.
func TestIdleH2Timeout(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	const idle = 3 * parkAfter
	h2Both(t, h2Handler(), Options{Timeouts: Timeouts{Idle: idle}}, func(t *testing.T, dial h2Dialer) {
		h := dial(t)
		h.c.SetDeadline(time.Now().Add(testTimeout))
		h.headers(1, true, h.block("GET", "/"))
		if status, _ := h.waitStream(1); status != "200" {
			t.Fatalf("stream 1: status %q", status)
		}
		start := time.Now()
		if code := h.waitGoAway(); code != http2.ErrCodeNo {
			t.Fatalf("GOAWAY %v, want NO_ERROR", code)
		}
		if d := time.Since(start); d < idle-parkAfter {
			t.Fatalf("GOAWAY after %v idle, want about %v", d, idle)
		}
	})
}

// TestIdleH2Shutdown: Shutdown ends an idle HTTP/2 connection that gave
// its buffers back with GOAWAY, and returns.
func TestIdleH2Shutdown(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	s, addr := startH2C(t, h2Handler(), Options{})
	h := dialH2(t, addr)
	h.c.SetDeadline(time.Now().Add(testTimeout))
	h.headers(1, true, h.block("GET", "/"))
	if status, _ := h.waitStream(1); status != "200" {
		t.Fatalf("stream 1: status %q", status)
	}
	time.Sleep(parkAfter + parkAfter/2) // given back
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		done <- s.Shutdown(ctx)
	}()
	if code := h.waitGoAway(); code != http2.ErrCodeNo {
		t.Fatalf("GOAWAY %v, want NO_ERROR", code)
	}
	if err := <-done; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
}
