package interop

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/simdedge/simdedge/internal/testnet"
)

// TestH2UpstreamThroughBinary: the binary proxies HTTP/1.1 clients to an
// h2c:// target (Go's HTTP/2-only server), on each engine and proxy path:
// a chunked upload streams up while its echo streams back, piece by
// piece, and the upstream's trailers arrive as chunked trailers for a
// client that sent TE: trailers. This is the path gRPC through an
// HTTP/1.1 hop will take.
func TestH2UpstreamThroughBinary(t *testing.T) {
	needBinary(t)
	l := testnet.Listen(t)
	srv := &http.Server{ReadHeaderTimeout: wsRunTimeout, Protocols: new(http.Protocols),
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Trailer", "Grpc-Status")
			w.Header().Set("X-Proto", r.Proto)
			w.WriteHeader(200)
			w.(http.Flusher).Flush()
			buf := make([]byte, 4096)
			for {
				n, err := r.Body.Read(buf)
				if n > 0 {
					w.Write(buf[:n])
					w.(http.Flusher).Flush()
				}
				if err != nil {
					break
				}
			}
			w.Header().Set("Grpc-Status", "0")
		})}
	srv.Protocols.SetUnencryptedHTTP2(true)
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	for _, run := range []struct {
		engine string
		onLoop bool
	}{{"goroutine", false}, {"loop", false}, {"loop", true}} {
		t.Run(fmt.Sprintf("%s/proxy_on_loop=%v", run.engine, run.onLoop), func(t *testing.T) {
			addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
			startSimdedge(t, fmt.Sprintf("engine: %s\nproxy_on_loop: %v\nlisten: %q\n"+
				"upstreams: [{name: g, targets: ['h2c://%s']}]\nroutes: [{match: {path_prefix: /}, proxy: {upstream: g}}]\n",
				run.engine, run.onLoop, addr, l.Addr()), addr)
			c, err := net.DialTimeout("tcp", addr, startWait)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(wsRunTimeout))
			io.WriteString(c, "POST /svc/Echo HTTP/1.1\r\nHost: x\r\nTE: trailers\r\nTransfer-Encoding: chunked\r\n\r\n")
			br := bufio.NewReader(c)
			var head strings.Builder
			for {
				line, err := br.ReadString('\n')
				if err != nil {
					t.Fatalf("head %q: %v", head.String(), err)
				}
				head.WriteString(line)
				if line == "\r\n" {
					break
				}
			}
			if h := head.String(); !strings.HasPrefix(h, "HTTP/1.1 200 ") || !strings.Contains(h, "X-Proto: HTTP/2.0\r\n") {
				t.Fatalf("head %q, want 200 from an HTTP/2 backend", h)
			}
			for i := range 20 {
				msg := fmt.Sprintf("message %d", i)
				fmt.Fprintf(c, "%x\r\n%s\r\n", len(msg), msg)
				var got strings.Builder
				for got.Len() < len(msg) {
					var n int
					line, err := br.ReadString('\n')
					if _, serr := fmt.Sscanf(line, "%x", &n); err != nil || serr != nil || n == 0 {
						t.Fatalf("message %d: chunk line %q %v", i, line, err)
					}
					b := make([]byte, n+2)
					if _, err := io.ReadFull(br, b); err != nil {
						t.Fatal(err)
					}
					got.Write(b[:n])
				}
				if got.String() != msg {
					t.Fatalf("echo %q, want %q", got.String(), msg)
				}
			}
			io.WriteString(c, "0\r\n\r\n")
			var tail strings.Builder
			for {
				line, err := br.ReadString('\n')
				if err != nil {
					t.Fatalf("tail %q: %v", tail.String(), err)
				}
				tail.WriteString(line)
				if line == "\r\n" {
					break
				}
			}
			if tail.String() != "0\r\nGrpc-Status: 0\r\n\r\n" {
				t.Fatalf("end %q, want the last chunk with Grpc-Status", tail.String())
			}
		})
	}
}
