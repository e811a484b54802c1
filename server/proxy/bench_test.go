package proxy

import (
	"context"
	"io"
	"net"
	"testing"
	"time"

	"github.com/simdedge/simdedge/server"
)

// BenchmarkProxyKeepAlive: one keep-alive client connection through the
// proxy to a simdedge origin, all over loopback in this process. It counts
// the client's, the proxy's and the origin's work; use it for profiles and
// allocations, and bench/load/run.sh for the proxy's own CPU time.
func BenchmarkProxyKeepAlive(b *testing.B) {
	serve := func(h server.Handler) (string, func()) {
		s := server.New(server.Options{Handler: h})
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		go s.ServeStream(server.TCPListener(l))
		return l.Addr().String(), func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			s.Shutdown(ctx)
		}
	}
	origin, stopOrigin := serve(server.HandlerFunc(func(w *server.ResponseWriter, r *server.Request) {
		w.AddHeader("Content-Type", "text/plain")
		w.WriteString("ok\n")
	}))
	defer stopOrigin()
	up, err := NewUpstream(UpstreamOptions{Targets: []string{origin}})
	if err != nil {
		b.Fatal(err)
	}
	defer up.Close()
	addr, stopProxy := serve(New(up, Options{}))
	defer stopProxy()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	req := []byte("GET /healthz HTTP/1.1\r\nHost: localhost\r\nUser-Agent: bench\r\nAccept: */*\r\n\r\n")
	buf := make([]byte, 4096)
	c.Write(req)
	size, err := c.Read(buf)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(req)))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		c.Write(req)
		if _, err := io.ReadFull(c, buf[:size]); err != nil {
			b.Fatal(err)
		}
	}
}
