package router

import (
	"io"
	"net"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/access"
	"github.com/simdedge/simdedge/server/ratelimit"
)

// BenchmarkRoutePolicy: the serving core's cost per request (one
// keep-alive connection over an in-memory conn, as server's
// BenchmarkServeStatic) for a respond route without policy, and with an
// allow list or a rate limit (a warm key, never refused).
func BenchmarkRoutePolicy(b *testing.B) { benchRoutePolicy(b, "", 0) }

// TestGateZeroAlloc: a request through an allow list or a rate limit
// (admitted with a warm key, or refused 429) allocates nothing: serving
// 3000 requests on one connection allocates no more than serving 1000
// (the connection's setup is the same), give or take the runtime's own.
func TestGateZeroAlloc(t *testing.T) {
	const few, many, slack = 1000, 3000, 20
	for _, name := range []string{"allow", "rate_limit", "rate_limit_refused"} {
		allocs := func(n int) uint64 {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			testing.Benchmark(func(b *testing.B) {
				if b.N > 1 {
					return // only the first, fixed-size run
				}
				benchRoutePolicy(b, name, n)
			})
			runtime.ReadMemStats(&after)
			return after.Mallocs - before.Mallocs
		}
		if a, b := allocs(few), allocs(many); b > a+slack {
			t.Errorf("%s: %d allocations for %d requests, %d for %d", name, a, few, b, many)
		}
	}
}

// benchRoutePolicy runs the benchmark of each policy (only: just that one,
// serving n requests in one run, for the allocation test).
func benchRoutePolicy(b *testing.B, only string, n int) {
	lim, _ := ratelimit.New(ratelimit.Options{Rate: 1e12, Burst: 1 << 30})
	refuse, _ := ratelimit.New(ratelimit.Options{Rate: 1e-6, Burst: 1})
	allow, _, _ := access.ParsePrefixes([]string{"10.0.0.0/8", "127.0.0.0/8"})
	ok := Respond(200, "ok\n", [][2]string{{"Content-Type", "text/plain"}})
	for _, tc := range []struct {
		name string
		h    server.Handler
	}{
		{"none", ok},
		{"allow", Gate(ok, GatePolicy{Rules: access.Rules{Allow: allow}})},
		{"rate_limit", Gate(ok, GatePolicy{Limit: lim})},
		{"rate_limit_refused", Gate(ok, GatePolicy{Limit: refuse})},
	} {
		if only != "" {
			if tc.name == only {
				runRoutePolicy(b, tc.h, n)
			}
			continue
		}
		b.Run("policy="+tc.name, func(b *testing.B) { runRoutePolicy(b, tc.h, b.N) })
	}
}

func runRoutePolicy(b *testing.B, h server.Handler, n int) {
	{
		{
			tab, err := New([]Route{{Match: Match{PathPrefix: "/"}, Handler: h}})
			if err != nil {
				b.Fatal(err)
			}
			s := server.New(server.Options{Handler: NewSwitch(tab)})
			c := &benchConn{left: n, done: make(chan struct{})}
			l := &benchListener{c: c, closed: make(chan struct{})}
			b.SetBytes(int64(len(benchRequest)))
			b.ReportAllocs()
			b.ResetTimer()
			go s.ServeStream(server.TCPListener(l))
			<-c.done
			b.StopTimer()
			l.Close()
			s.Close()
			if c.written == 0 {
				b.Fatal("no response")
			}
		}
	}
}

const benchRequest = "GET /healthz HTTP/1.1\r\nHost: localhost:8080\r\nUser-Agent: wrk\r\nAccept: */*\r\n\r\n"

var benchAddr = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}

type benchConn struct {
	left    int
	written int64
	done    chan struct{}
	once    sync.Once
}

func (c *benchConn) Read(p []byte) (int, error) {
	if c.left == 0 {
		return 0, io.EOF
	}
	c.left--
	return copy(p, benchRequest), nil
}
func (c *benchConn) Write(p []byte) (int, error)      { c.written += int64(len(p)); return len(p), nil }
func (c *benchConn) Close() error                     { c.once.Do(func() { close(c.done) }); return nil }
func (c *benchConn) LocalAddr() net.Addr              { return benchAddr }
func (c *benchConn) RemoteAddr() net.Addr             { return benchAddr }
func (c *benchConn) SetDeadline(time.Time) error      { return nil }
func (c *benchConn) SetReadDeadline(time.Time) error  { return nil }
func (c *benchConn) SetWriteDeadline(time.Time) error { return nil }

type benchListener struct {
	c      net.Conn
	closed chan struct{}
	once   sync.Once
}

func (l *benchListener) Accept() (net.Conn, error) {
	if c := l.c; c != nil {
		l.c = nil
		return c, nil
	}
	<-l.closed
	return nil, net.ErrClosed
}
func (l *benchListener) Close() error   { l.once.Do(func() { close(l.closed) }); return nil }
func (l *benchListener) Addr() net.Addr { return benchAddr }
