package server

import (
	"bufio"
	"context"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/simdedge/simdedge/internal/testenv"
	"github.com/simdedge/simdedge/internal/testnet"
	"github.com/simdedge/simdedge/server/internal/memnet"
	"github.com/simdedge/simdedge/server/metrics"
)

// freshRace is how long the test lets Shutdown run before the spared
// connection sends its request: many of Shutdown's wake rounds
// (shutdownPoll), well within reclaimFreshAfter.
const freshRace = 150 * time.Millisecond

// TestShutdownSparesFreshConnection: a connection accepted just before
// Shutdown, whose request arrives just after, is answered (with
// Connection: close) instead of closed unanswered; one that stays silent
// is closed once reclaimFreshAfter has passed, and Shutdown returns. A
// restart on a socket that outlives the process (systemd socket
// activation) would otherwise lose the request of a client that connected
// as the old process began to drain.
//
// The handler runs on the event loop ("inline") or, handed off, on a
// goroutine: the loop must not drop a request it hands off during
// Shutdown either.
func TestShutdownSparesFreshConnection(t *testing.T) {
	plain := HandlerFunc(func(w *ResponseWriter, r *Request) { w.WriteString("ok") })
	for _, tc := range []struct {
		name string
		h    Handler
	}{{"inline", okHandler("ok")}, {"handed-off", plain}} {
		t.Run(tc.name, func(t *testing.T) { testShutdownSparesFresh(t, tc.h) })
	}
}

func testShutdownSparesFresh(t *testing.T, h Handler) {
	set := metrics.NewSet()
	s, addr := startTCP(t, h, Options{Metrics: set})
	c := dial(t, addr)
	silent := dial(t, addr)
	// Both accepted (not merely queued in the backlog, which closing the
	// listener would reset).
	testnet.WaitFor(t, testTimeout, "two accepted connections", func() bool {
		ls := set.Listeners()
		return len(ls) == 1 && ls[0].Totals().Opened == 2
	})
	shut := make(chan error, 1)
	start := time.Now()
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		shut <- s.Shutdown(ctx)
	}()
	testnet.WaitFor(t, testTimeout, "Shutdown to begin", s.closing.Load)
	time.Sleep(freshRace)
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	resp, body := readResponse(t, bufio.NewReader(c), "GET")
	if resp.StatusCode != 200 || body != "ok" || !resp.Close {
		t.Errorf("request sent during Shutdown on a fresh connection: %d %q close=%v, want 200 \"ok\" and close", resp.StatusCode, body, resp.Close)
	}
	expectClosed(t, bufio.NewReader(silent))
	if el := time.Since(start); el < reclaimFreshAfter-freshRace {
		t.Errorf("silent fresh connection closed %v into Shutdown, before reclaimFreshAfter (%v)", el, reclaimFreshAfter)
	}
	if err := <-shut; err != nil {
		t.Errorf("Shutdown: %v", err)
	}
}

// lateListener is a StreamListener whose Close does not interrupt an
// Accept waiting for the connection the test hands in: it returns that
// connection after Shutdown has begun, as a kernel accept that raced
// closing does.
type lateListener struct {
	conns  chan net.Conn
	closed atomic.Bool
	// waiting receives a value each time Accept starts to wait.
	waiting chan struct{}
}

func (l *lateListener) Accept() (Stream, error) {
	if l.closed.Load() {
		return nil, net.ErrClosed
	}
	l.waiting <- struct{}{}
	return <-l.conns, nil
}

func (l *lateListener) Close() error   { l.closed.Store(true); return nil }
func (l *lateListener) Addr() net.Addr { return memnet.Addr("late") }

// TestShutdownServesLateAccept: a connection that Accept returns after
// Shutdown has begun is served, not closed: it has left the kernel's
// queue, which on a socket shared with the next process (systemd's) it
// would otherwise have waited in.
func TestShutdownServesLateAccept(t *testing.T) {
	testenv.CheckGoroutines(t)
	s := New(Options{Handler: okHandler("ok")})
	l := &lateListener{conns: make(chan net.Conn), waiting: make(chan struct{}, 1)}
	served := make(chan error, 1)
	go func() { served <- s.ServeStream(l) }()
	<-l.waiting // ServeStream is in Accept
	shut := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		shut <- s.Shutdown(ctx)
	}()
	testnet.WaitFor(t, testTimeout, "Shutdown to begin", s.closing.Load)
	client, srv := net.Pipe()
	defer client.Close()
	client.SetDeadline(time.Now().Add(testTimeout))
	l.conns <- srv
	go io.WriteString(client, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	resp, body := readResponse(t, bufio.NewReader(client), "GET")
	if resp.StatusCode != 200 || body != "ok" || !resp.Close {
		t.Errorf("late-accepted connection: %d %q close=%v, want 200 \"ok\" and close", resp.StatusCode, body, resp.Close)
	}
	if err := <-shut; err != nil {
		t.Errorf("Shutdown: %v", err)
	}
	if err := <-served; err != ErrServerClosed {
		t.Errorf("ServeStream: %v, want ErrServerClosed", err)
	}
}
