package server

import (
	"context"
	"testing"
	"time"

	"golang.org/x/net/http2"

	"github.com/simdedge/simdedge/internal/testnet"
)

// gateHandler holds requests to /gate until release is closed.
type gateHandler struct {
	entered chan struct{}
	release chan struct{}
}

func (g *gateHandler) ServeEdge(w *ResponseWriter, r *Request) {
	if string(r.Target()) == "/gate" {
		g.entered <- struct{}{}
		<-g.release
	}
	w.WriteString("done")
}

// drainCase opens a stream that waits in its handler, runs stop, and
// checks that GOAWAY (NO_ERROR, last stream 1) arrives while the stream
// is open, that the stream still completes, and that a stream opened
// after the GOAWAY is refused.
func drainCase(t *testing.T, c *h2raw, g *gateHandler, stop func()) {
	t.Helper()
	c.headers(1, true, c.block("GET", "/gate"))
	<-g.entered
	go stop()
	for {
		f := c.read()
		if ga, ok := f.(*http2.GoAwayFrame); ok {
			if ga.ErrCode != http2.ErrCodeNo || ga.LastStreamID != 1 {
				t.Fatalf("GOAWAY %v last %d, want NO_ERROR last 1", ga.ErrCode, ga.LastStreamID)
			}
			break
		}
	}
	c.headers(3, true, c.block("GET", "/"))
	if _, code := c.waitStream(3); code != http2.ErrCodeRefusedStream {
		t.Errorf("stream after GOAWAY: %v, want REFUSED_STREAM", code)
	}
	close(g.release)
	if status, _ := c.waitStream(1); status != "200" {
		t.Fatalf("draining stream answered %q", status)
	}
	// The connection then ends.
	c.c.SetReadDeadline(time.Now().Add(testTimeout))
	for {
		if _, err := c.fr.ReadFrame(); err != nil {
			break
		}
	}
}

// TestH2GoAwayOnShutdown: Shutdown sends GOAWAY at once and lets the open
// stream finish.
func TestH2GoAwayOnShutdown(t *testing.T) {
	g := &gateHandler{entered: make(chan struct{}, 1), release: make(chan struct{})}
	s, addr := startH2C(t, g, Options{})
	c := dialH2(t, addr)
	done := make(chan error, 1)
	drainCase(t, c, g, func() {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		done <- s.Shutdown(ctx)
	})
	if err := <-done; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
}

// TestH2GoAwayOnStopListener: a reload that stops the listener drains its
// HTTP/2 connections the same way.
func TestH2GoAwayOnStopListener(t *testing.T) {
	g := &gateHandler{entered: make(chan struct{}, 1), release: make(chan struct{})}
	s := New(Options{Handler: g})
	l := testnet.Listen(t)
	s.EnableH2C(l)
	served := make(chan error, 1)
	go func() { served <- s.ServeTCP(l, testEngine) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		s.Shutdown(ctx)
	})
	c := dialH2(t, l.Addr().String())
	drainCase(t, c, g, func() { s.StopListener(l) })
	if err := <-served; err != ErrListenerStopped {
		t.Fatalf("Serve returned %v", err)
	}
}
