package server

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quic-go/quic-go"

	"github.com/simdedge/simdedge/internal/h3test"
)

// h3OpenConns is the number of HTTP/3 connections s holds.
func h3OpenConns(s *Server) int {
	s.h3.mu.Lock()
	defer s.h3.mu.Unlock()
	return len(s.h3.conns)
}

// TestH3SilentPeer: a client asks for a large response and then never
// acknowledges anything. The server keeps serving a new client promptly,
// and gives the silent connection up by its idle timeout, with the
// handler unblocked and its goroutines gone.
func TestH3SilentPeer(t *testing.T) {
	const idle = time.Second
	big := make([]byte, 8<<20)
	var wrote atomic.Int64
	done := make(chan struct{}, 1)
	h := HandlerFunc(func(w *ResponseWriter, r *Request) {
		if string(r.Target()) != "/big" {
			w.WriteString("ok")
			return
		}
		defer func() { done <- struct{}{} }()
		for off := 0; off < len(big); off += 64 << 10 {
			if _, err := w.Write(big[off : off+64<<10]); err != nil {
				return
			}
			wrote.Add(64 << 10)
		}
	})
	s, p, addr := startH3(t, h, Options{}, HTTP3Options{IdleTimeout: idle})

	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	mc := &h3test.MuteConn{PacketConn: udp}
	tr := &quic.Transport{Conn: mc}
	defer tr.Close()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	ua, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	// The client would wait far longer than the server: the server's own
	// idle timeout is what must end the connection.
	c, err := tr.Dial(ctx, ua, h3RawTLS(p), &quic.Config{MaxIdleTimeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseWithError(0, "")
	h3test.Control(t, c)
	st, err := c.OpenStreamSync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	st.Write(h3test.Headers(h3test.Get("GET", "/big")...))
	st.Close()
	// Let the response start, then go deaf.
	deadline := time.Now().Add(testTimeout)
	for wrote.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if wrote.Load() == 0 {
		t.Fatal("the large response never started")
	}
	mc.Mute.Store(true)
	if h3OpenConns(s) != 1 {
		t.Fatalf("%d HTTP/3 connections open, want the silent one", h3OpenConns(s))
	}

	// A new client is served promptly while the silent one holds its
	// connection and flow-control window.
	start := time.Now()
	c2 := h3test.Dial(t, addr, h3RawTLS(p), nil)
	if status, body, err := h3test.Request(t, c2, nil, h3test.Get("GET", "/")...); status != "200" || string(body) != "ok" {
		t.Fatalf("a new client beside the silent one: %q %q %v", status, body, err)
	}
	if d := time.Since(start); d > testTimeout/2 {
		t.Errorf("a new client took %v beside the silent one", d)
	}
	c2.CloseWithError(0, "")

	// The silent connection is given up: the handler's write fails and
	// returns, and the server drops the connection, within its idle
	// timeout and quic-go's loss detection on top (bounded by testTimeout).
	select {
	case <-done:
	case <-time.After(testTimeout):
		t.Fatalf("the handler still writes to a peer silent for %v (%d bytes taken)", testTimeout, wrote.Load())
	}
	if wrote.Load() >= int64(len(big)) {
		t.Errorf("all %d bytes were taken by a peer that acknowledged none of them after muting", len(big))
	}
	deadline = time.Now().Add(testTimeout)
	for h3OpenConns(s) != 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := h3OpenConns(s); n != 0 {
		t.Errorf("%d HTTP/3 connections still open after the silent peer's idle timeout", n)
	}
}
