package server

import (
	"io"
	"net"
	"testing"
	"time"
)

// BenchmarkKeepAliveCPU is one keep-alive connection over loopback TCP
// sending a GET and waiting for its answer, request after request, on each
// engine, with the process's CPU time per request (cpu-ns/op, client
// included). Between two requests the connection is idle: on the loop it
// parks and wakes every time (looppark_linux.go), so this is the cost the
// park adds to a request. It uses only the public API, so the same file
// runs on a tree without parking (bench/results/idle-memory-2026-11-28.md).
func BenchmarkKeepAliveCPU(b *testing.B) {
	for _, e := range []Engine{EngineLoop, EngineGoroutine} {
		b.Run("engine="+string(e), func(b *testing.B) {
			s := New(Options{Handler: Inline(HandlerFunc(func(w *ResponseWriter, r *Request) {
				w.AddHeader("Content-Type", "text/plain")
				w.WriteString("ok\n")
			}))})
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- s.ServeTCP(l, e) }()
			defer func() { s.Close(); <-done }()
			c, err := net.Dial("tcp", l.Addr().String())
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(time.Minute))
			req := []byte("GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
			buf := make([]byte, 4096)
			c.Write(req)
			size, err := c.Read(buf)
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			start := processCPU(b)
			for range b.N {
				if _, err := c.Write(req); err != nil {
					b.Fatal(err)
				}
				if _, err := io.ReadFull(c, buf[:size]); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(processCPU(b)-start)/float64(b.N), "cpu-ns/op")
		})
	}
}
