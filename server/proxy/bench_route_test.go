package proxy

import (
	"context"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/router"
)

// benchRoute measures one keep-alive client connection through a router
// route to a simdedge origin, over loopback in this process, on the
// event loop with its own proxy (the default configuration), the client
// sending req. route makes the route to the upstream. The time counts the
// client's, the proxy's and the origin's work, so compare routes by the
// ratio of two runs made side by side (bench_rewrite_test.go has the
// route with a policy; this file builds on the API before issue 23, so it
// runs on older commits too).
func benchRoute(b *testing.B, req string, route func(h server.Handler) router.Route) {
	serve := func(h server.Handler) (string, func()) {
		s := server.New(server.Options{Handler: h, LoopProxy: true})
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		go s.ServeTCP(l, server.EngineLoop)
		return l.Addr().String(), func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			s.Shutdown(ctx)
		}
	}
	origin, stopOrigin := serve(server.HandlerFunc(func(w *server.ResponseWriter, r *server.Request) {
		w.AddHeader("Content-Type", "text/plain")
		w.AddHeader("Server", "origin")
		w.WriteString("ok\n")
	}))
	defer stopOrigin()
	up, err := NewUpstream(UpstreamOptions{Targets: []string{origin}})
	if err != nil {
		b.Fatal(err)
	}
	defer up.Close()
	tab, err := router.New([]router.Route{
		{Match: router.Match{Path: "/healthz"}, Handler: router.Respond(200, "ok\n", nil)},
		route(New(up, Options{})),
	})
	if err != nil {
		b.Fatal(err)
	}
	addr, stopProxy := serve(router.NewSwitch(tab))
	defer stopProxy()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	rb := []byte(req)
	buf := make([]byte, 4096)
	c.Write(rb)
	size, err := c.Read(buf)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(rb)))
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := processCPU(b)
	for range b.N {
		c.Write(rb)
		if _, err := io.ReadFull(c, buf[:size]); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	// The process's CPU time (client, proxy and origin), which a shared
	// machine's waits for the CPU do not inflate as they do ns/op.
	b.ReportMetric(float64(processCPU(b)-cpu0)/float64(b.N), "cpu-ns/op")
}

// processCPU is the process's user and system CPU time in nanoseconds.
func processCPU(b *testing.B) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// benchRequest is what the client sends: a browser-like GET of an API.
const benchRequest = "GET /api/v1/users?id=7 HTTP/1.1\r\nHost: api.example.com\r\nUser-Agent: bench\r\nAccept: */*\r\nX-Tenant: blue\r\nX-Debug: 1\r\n\r\n"

// BenchmarkRouteProxyPlain: the route has a path prefix and nothing else.
func BenchmarkRouteProxyPlain(b *testing.B) {
	benchRoute(b, benchRequest, func(h server.Handler) router.Route {
		return router.Route{Match: router.Match{PathPrefix: "/api/"}, Handler: h}
	})
}
