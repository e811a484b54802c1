// Package servetest starts a server.Server on a loopback listener with the
// engine under test and stops it at cleanup: the set-up that the tests of
// the packages above server (proxy, router, files, stdhttp, cmd) share.
//
// The engine comes from the caller, which gets it from its TestMain
// (server/internal/enginetest runs the suite once per engine). Server's
// own internal tests cannot import this package (it imports server); they
// use internal/testnet, which holds the parts that need no server.
//
// A test that checks for leaked goroutines calls testenv.CheckGoroutines
// first, before it starts origins, servers or clients: cleanups run last
// in first out, so the check then runs after the server here has shut down.
package servetest

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/simdedge/simdedge/internal/testnet"
	"github.com/simdedge/simdedge/server"
)

// ShutdownTimeout bounds the Shutdown at cleanup, and the wait for the
// serving call to return after it: past it, Shutdown closes the
// connections still open and the test fails instead of hanging.
const ShutdownTimeout = 20 * time.Second

// Serve serves s on a new loopback listener with engine e (HTTP/1.1) and
// returns the listener's address. At cleanup it shuts s down within
// ShutdownTimeout and fails tb unless ServeTCP returned
// server.ErrServerClosed.
func Serve(tb testing.TB, s *server.Server, e server.Engine) string {
	tb.Helper()
	return serve(tb, s, "ServeTCP", func(l net.Listener) error { return s.ServeTCP(l, e) })
}

// ServeH2C is Serve with h2c (HTTP/2 with prior knowledge, and the
// HTTP/1.1 upgrade) enabled on the listener.
func ServeH2C(tb testing.TB, s *server.Server, e server.Engine) string {
	tb.Helper()
	return serve(tb, s, "ServeTCP", func(l net.Listener) error {
		s.EnableH2C(l)
		return s.ServeTCP(l, e)
	})
}

// ServeTLS is Serve over TLS with o (h2 when o.Config offers it in
// NextProtos).
func ServeTLS(tb testing.TB, s *server.Server, e server.Engine, o server.TLSOptions) string {
	tb.Helper()
	return serve(tb, s, "ServeTLS", func(l net.Listener) error { return s.ServeTLS(l, e, o) })
}

// ServeListener is Serve on l, a listener the test prepared: wrapped
// (server.WithPolicy) or given settings of its own (SetListenerPaths)
// before the server accepts on it. It shuts s down at cleanup as Serve
// does.
func ServeListener(tb testing.TB, s *server.Server, l net.Listener, e server.Engine) string {
	tb.Helper()
	return serveOn(tb, s, l, "ServeTCP", func(l net.Listener) error { return s.ServeTCP(l, e) })
}

// ServeH3 serves s over HTTP/3 with the TLS configuration tc and the
// limits o on a new loopback UDP socket and returns its address. At
// cleanup it shuts s down as Serve does and closes the socket.
func ServeH3(tb testing.TB, s *server.Server, tc *tls.Config, o server.HTTP3Options) string {
	tb.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.ServeHTTP3(pc, tc, o) }()
	tb.Cleanup(func() {
		defer pc.Close()
		ctx, cancel := context.WithTimeout(context.Background(), ShutdownTimeout)
		defer cancel()
		s.Shutdown(ctx)
		select {
		case err := <-done:
			if !errors.Is(err, server.ErrServerClosed) {
				tb.Errorf("ServeHTTP3 returned %v, want server.ErrServerClosed", err)
			}
		case <-time.After(ShutdownTimeout):
			tb.Errorf("ServeHTTP3 still running %v after Shutdown", ShutdownTimeout)
		}
	})
	return pc.LocalAddr().String()
}

// Start builds a server from o and serves it as Serve does.
func Start(tb testing.TB, o server.Options, e server.Engine) (*server.Server, string) {
	tb.Helper()
	s := server.New(o)
	return s, Serve(tb, s, e)
}

func serve(tb testing.TB, s *server.Server, name string, run func(net.Listener) error) string {
	tb.Helper()
	return serveOn(tb, s, testnet.Listen(tb), name, run)
}

func serveOn(tb testing.TB, s *server.Server, l net.Listener, name string, run func(net.Listener) error) string {
	tb.Helper()
	done := make(chan error, 1)
	// EnableH2C must see the listener before the first accept, so it
	// runs in the serving goroutine just before the serve call.
	go func() { done <- run(l) }()
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), ShutdownTimeout)
		defer cancel()
		s.Shutdown(ctx)
		select {
		case err := <-done:
			if !errors.Is(err, server.ErrServerClosed) {
				tb.Errorf("%s returned %v, want server.ErrServerClosed", name, err)
			}
		case <-time.After(ShutdownTimeout):
			tb.Errorf("%s still running %v after Shutdown", name, ShutdownTimeout)
		}
	})
	return l.Addr().String()
}
