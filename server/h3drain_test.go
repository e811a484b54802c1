package server

import (
	"context"
	"io"
	"net"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/quicvarint"

	"github.com/simdedge/simdedge/internal/h3test"
	"github.com/simdedge/simdedge/internal/testenv"
	"github.com/simdedge/simdedge/server/edgetls"
)

// TestH3Shutdown: Shutdown sends GOAWAY, lets the request in flight end
// with its full response, and returns.
func TestH3Shutdown(t *testing.T) {
	h := newBlockHandler()
	s, p, addr := startH3(t, h, Options{}, HTTP3Options{})
	c := h3test.Dial(t, addr, h3RawTLS(p), nil)
	goaway := h3WatchGoaway(t, c) // SETTINGS, then GOAWAY
	st, _ := c.OpenStream()
	st.Write(h3test.Headers(h3test.Get("GET", "/block")...))
	st.Close()
	<-h.started
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		done <- s.Shutdown(ctx)
	}()
	select {
	case id := <-goaway:
		if id != uint64(st.StreamID())+4 {
			t.Errorf("GOAWAY names stream %d, want %d", id, st.StreamID()+4)
		}
	case <-time.After(testTimeout):
		t.Fatal("no GOAWAY")
	}
	close(h.release)
	status, body, err := h3test.Response(st)
	if status != "200" || string(body) != "released" {
		t.Fatalf("the request in flight: %q %q %v", status, body, err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
}

// TestH3StopListener: a socket stopped by a reload (StopListener) stops
// accepting, sends its connections GOAWAY and lets the request in flight
// finish; ServeHTTP3 then returns ErrListenerStopped.
func TestH3StopListener(t *testing.T) {
	testenv.CheckGoroutines(t)
	p := newPKI(t)
	st, err := edgetls.New(edgetls.Options{Certificates: certFiles(p.a)})
	if err != nil {
		t.Fatal(err)
	}
	h := newBlockHandler()
	s := New(Options{Handler: h})
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	done := make(chan error, 1)
	go func() { done <- s.ServeHTTP3(pc, st.QUICConfig(), HTTP3Options{}) }()
	defer s.Close()
	c := h3test.Dial(t, pc.LocalAddr().String(), h3RawTLS(p), nil)
	goaway := h3WatchGoaway(t, c)
	qs, _ := c.OpenStream()
	qs.Write(h3test.Headers(h3test.Get("GET", "/block")...))
	qs.Close()
	<-h.started
	if !s.StopListener(pc) {
		t.Fatal("StopListener: not served")
	}
	select {
	case <-goaway:
	case <-time.After(testTimeout):
		t.Fatal("no GOAWAY after StopListener")
	}
	close(h.release)
	if status, body, err := h3test.Response(qs); status != "200" || string(body) != "released" {
		t.Fatalf("the request in flight: %q %q %v", status, body, err)
	}
	select {
	case err := <-done:
		if err != ErrListenerStopped {
			t.Fatalf("ServeHTTP3 returned %v", err)
		}
	case <-time.After(testTimeout):
		t.Fatal("ServeHTTP3 still running")
	}
}

// h3WatchGoaway reads the server's control stream and reports the stream
// ID of its GOAWAY.
func h3WatchGoaway(t *testing.T, c *quic.Conn) chan uint64 {
	goaway := make(chan uint64, 1)
	go func() {
		st, err := c.AcceptUniStream(context.Background())
		if err != nil {
			return
		}
		var fr h3Reader
		fr.reset(st)
		var typ [1]byte
		io.ReadFull(st, typ[:])
		for {
			ft, length, err := fr.next()
			if err != nil {
				return
			}
			pl := make([]byte, length)
			if fr.payloadInto(pl) != nil {
				return
			}
			if ft == h3FrameGoaway {
				id, _, _ := quicvarint.Parse(pl)
				goaway <- id
				return
			}
		}
	}()
	return goaway
}

// TestH3StartDrain: StartDrain sends GOAWAY to an open HTTP/3 connection
// at once; a connection opened during the drain is served its first
// request and then gets GOAWAY (as HTTP/2's), so that a client that
// reconnects is answered instead of sent round in a loop.
func TestH3StartDrain(t *testing.T) {
	s, p, addr := startH3(t, HandlerFunc(func(w *ResponseWriter, r *Request) { w.WriteString("ok") }), Options{}, HTTP3Options{})
	old := h3test.Dial(t, addr, h3RawTLS(p), nil)
	oldGoaway := h3WatchGoaway(t, old)
	if status, _, err := h3test.Request(t, old, nil, h3test.Get("GET", "/")...); status != "200" {
		t.Fatalf("before the drain: %q %v", status, err)
	}
	s.StartDrain()
	select {
	case id := <-oldGoaway:
		if id != 4 {
			t.Errorf("GOAWAY names stream %d, want 4", id)
		}
	case <-time.After(testTimeout):
		t.Fatal("no GOAWAY for the open connection")
	}
	fresh := h3test.Dial(t, addr, h3RawTLS(p), nil)
	freshGoaway := h3WatchGoaway(t, fresh)
	if status, body, err := h3test.Request(t, fresh, nil, h3test.Get("GET", "/")...); status != "200" || string(body) != "ok" {
		t.Fatalf("a connection opened during the drain: %q %q %v", status, body, err)
	}
	select {
	case id := <-freshGoaway:
		if id != 4 {
			t.Errorf("GOAWAY names stream %d, want 4", id)
		}
	case <-time.After(testTimeout):
		t.Fatal("no GOAWAY after the first stream of a connection opened during the drain")
	}
}
