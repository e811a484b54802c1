package server

import (
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/simdedge/simdedge/server/accesslog"
	"github.com/simdedge/simdedge/server/metrics"
)

// Server cost per request without the kernel: each server runs one
// keep-alive connection over serverFakeConn, which hands it one request per
// Read (as a non-pipelining client does) and discards the responses, so the
// benchmark measures the serving core alone (parse, route, respond, frame),
// the same bytes for every server: GET /healthz -> 200 "ok\n" text/plain.
// Peers are compared under load with bench/load/run.sh: over this fake
// connection net/http's per-connection background reader distorts its
// timing, and the bench module (where fasthttp lives) cannot import server
// until its go.mod requires github.com/google/flatbuffers, which
// parse/json/body brings in.

const serverRequest = "GET /healthz HTTP/1.1\r\nHost: localhost:8080\r\nUser-Agent: wrk\r\nAccept: */*\r\n\r\n"

type serverFakeConn struct {
	left    int // requests still to hand out
	written int64
	done    chan struct{}
	once    sync.Once
}

func newServerFakeConn(n int) *serverFakeConn {
	return &serverFakeConn{left: n, done: make(chan struct{})}
}

func (c *serverFakeConn) Read(p []byte) (int, error) {
	if c.left == 0 {
		return 0, io.EOF
	}
	c.left--
	return copy(p, serverRequest), nil
}
func (c *serverFakeConn) Write(p []byte) (int, error) { c.written += int64(len(p)); return len(p), nil }
func (c *serverFakeConn) Close() error                { c.once.Do(func() { close(c.done) }); return nil }
func (c *serverFakeConn) LocalAddr() net.Addr         { return serverAddr }
func (c *serverFakeConn) RemoteAddr() net.Addr        { return serverAddr }
func (c *serverFakeConn) SetDeadline(time.Time) error { return nil }
func (c *serverFakeConn) SetReadDeadline(time.Time) error {
	return nil
}
func (c *serverFakeConn) SetWriteDeadline(time.Time) error { return nil }

var serverAddr = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}

// serverOneShot is a listener that yields one connection, then blocks until
// closed.
type serverOneShot struct {
	c      net.Conn
	closed chan struct{}
	once   sync.Once
}

func (l *serverOneShot) Accept() (net.Conn, error) {
	if c := l.c; c != nil {
		l.c = nil
		return c, nil
	}
	<-l.closed
	return nil, net.ErrClosed
}
func (l *serverOneShot) Close() error   { l.once.Do(func() { close(l.closed) }); return nil }
func (l *serverOneShot) Addr() net.Addr { return serverAddr }

func serverRun(b *testing.B, serve func(l *serverOneShot)) {
	c := newServerFakeConn(b.N)
	l := &serverOneShot{c: c, closed: make(chan struct{})}
	b.SetBytes(int64(len(serverRequest)))
	b.ReportAllocs()
	b.ResetTimer()
	go serve(l)
	<-c.done
	b.StopTimer()
	l.Close()
	if c.written == 0 {
		b.Fatal("no response written")
	}
}

func BenchmarkServeStatic(b *testing.B) {
	b.Run("impl=simdedge", func(b *testing.B) {
		h := HandlerFunc(func(w *ResponseWriter, r *Request) {
			w.AddHeader("Content-Type", "text/plain")
			w.WriteString("ok\n")
		})
		s := New(Options{Handler: h})
		serverRun(b, func(l *serverOneShot) { s.ServeStream(TCPListener(l)) })
		s.Close()
	})
	// With Options.Metrics: the cost of counting (a clock read and the
	// route's atomic adds per request).
	b.Run("impl=simdedge-metrics", func(b *testing.B) {
		set := metrics.NewSet()
		rt := set.Route("static")
		h := routed(rt, HandlerFunc(func(w *ResponseWriter, r *Request) {
			w.AddHeader("Content-Type", "text/plain")
			w.WriteString("ok\n")
		}))
		s := New(Options{Handler: h, Metrics: set})
		serverRun(b, func(l *serverOneShot) { s.ServeStream(TCPListener(l)) })
		s.Close()
	})
	// With counting, a JSON access log (to io.Discard: the formatting and
	// buffering, not the disk) and generated request IDs.
	b.Run("impl=simdedge-observed", func(b *testing.B) {
		set := metrics.NewSet()
		rt := set.Route("static")
		h := routed(rt, HandlerFunc(func(w *ResponseWriter, r *Request) {
			w.AddHeader("Content-Type", "text/plain")
			w.WriteString("ok\n")
		}))
		alog, err := accesslog.Open(accesslog.Options{Writer: io.Discard})
		if err != nil {
			b.Fatal(err)
		}
		s := New(Options{Handler: h, Metrics: set, AccessLog: alog, RequestID: RequestIDOptions{Header: "X-Request-Id", Generate: true}})
		serverRun(b, func(l *serverOneShot) { s.ServeStream(TCPListener(l)) })
		s.Close()
		alog.Close()
	})
}
