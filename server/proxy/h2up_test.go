package proxy

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/simdedge/simdedge/internal/testcert"
	"github.com/simdedge/simdedge/internal/testenv"
	"github.com/simdedge/simdedge/internal/testnet"
	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/upstream"
)

// h2Origin is an HTTP/2-only backend: Go's HTTP/2 server (x/net/http2's,
// bundled in net/http) over plain TCP (h2c with prior knowledge) or TLS
// (ALPN h2), with HTTP/1 off, counting its connections.
type h2Origin struct {
	addr  string
	conns atomic.Int32
	ca    *testcert.CA
}

// h2Handler answers /echo by streaming the request body back as it
// arrives (a flush per read), with trailers; other paths with the
// protocol and forwarding fields it saw.
var h2Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Proto", r.Proto)
	w.Header().Set("X-Seen-XFF", r.Header.Get("X-Forwarded-For"))
	w.Header().Set("X-Seen-TE", r.Header.Get("Te"))
	if r.URL.Path != "/echo" {
		io.WriteString(w, "h2 "+r.Method+" "+r.URL.RequestURI())
		return
	}
	w.Header().Set("Trailer", "Grpc-Status")
	w.WriteHeader(200)
	w.(http.Flusher).Flush()
	buf := make([]byte, 32<<10)
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
})

// startH2Origin serves h2Handler, or h if given, over h2c or TLS.
func startH2Origin(t *testing.T, useTLS bool, h ...http.Handler) *h2Origin {
	t.Helper()
	l := testnet.Listen(t)
	o := &h2Origin{addr: l.Addr().String()}
	srv := &http.Server{ReadHeaderTimeout: testTimeout, ConnState: func(c net.Conn, s http.ConnState) {
		if s == http.StateNew {
			o.conns.Add(1)
		}
	}}
	srv.Handler = h2Handler
	if len(h) > 0 {
		srv.Handler = h[0]
	}
	srv.Protocols = new(http.Protocols)
	if useTLS {
		o.ca = testcert.NewCA(t, "h2 origin CA")
		leaf := o.ca.Leaf(t, "h2", []string{"127.0.0.1", "h2.example"}, time.Time{}, time.Time{})
		srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{leaf.TLS}}
		srv.Protocols.SetHTTP2(true)
		go srv.ServeTLS(l, "", "")
	} else {
		srv.Protocols.SetUnencryptedHTTP2(true)
		go srv.Serve(l)
	}
	t.Cleanup(func() { srv.Close() })
	return o
}

// startH2Proxy proxies to o over h2c or h2 (TLS, verified against o's CA).
func startH2Proxy(t *testing.T, targets []string, o *h2Origin) (string, *Upstream) {
	t.Helper()
	uo := UpstreamOptions{Name: "h2", Targets: targets, HTTP2: true}
	if o.ca != nil {
		uo.TLS = &tls.Config{RootCAs: o.ca.Pool, ServerName: "h2.example"}
	}
	return startProxy(t, uo, server.Options{})
}

// TestH2Upstream: HTTP/1.1 clients reach h2c and h2 backends through the
// proxy, on every engine: the backend sees HTTP/2 and the forwarding
// fields; bodies of 1 MiB go both ways; 40 concurrent requests share one
// connection (multiplexed); a chunked request body streams to the backend
// while its echo streams back, piece by piece; trailers come back to a
// client that sent TE: trailers (as chunked trailers), and TE: trailers is
// sent upstream for it.
func TestH2Upstream(t *testing.T) {
	for _, useTLS := range []bool{false, true} {
		t.Run(fmt.Sprintf("tls=%v", useTLS), func(t *testing.T) {
			testenv.CheckGoroutines(t)
			o := startH2Origin(t, useTLS)
			addr, up := startH2Proxy(t, []string{o.addr}, o)
			if up.loopable {
				t.Fatal("an h2 upstream must not be proxied on the loop")
			}
			c := client(t)
			req, _ := http.NewRequest("GET", "http://"+addr+"/a?b=1", nil)
			resp, body := get(t, c, req)
			if resp.StatusCode != 200 || string(body) != "h2 GET /a?b=1" || resp.Header.Get("X-Proto") != "HTTP/2.0" ||
				resp.Header.Get("X-Seen-XFF") != "127.0.0.1" || !strings.HasSuffix(resp.Header.Get("Via"), "2 simdedge") {
				t.Fatalf("got %d %q %v", resp.StatusCode, body, resp.Header)
			}
			big := bytes.Repeat([]byte("0123456789abcdef"), 1<<20/16)
			req, _ = http.NewRequest("POST", "http://"+addr+"/echo", bytes.NewReader(big))
			resp, body = get(t, c, req)
			if resp.StatusCode != 200 || !bytes.Equal(body, big) {
				t.Fatalf("1 MiB echo: %d, %d bytes", resp.StatusCode, len(body))
			}

			var wg sync.WaitGroup
			errs := make(chan error, 40)
			for i := range 40 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					req, _ := http.NewRequest("GET", fmt.Sprintf("http://%s/p/%d", addr, i), nil)
					resp, err := c.Do(req)
					if err != nil {
						errs <- err
						return
					}
					b, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					if want := fmt.Sprintf("h2 GET /p/%d", i); string(b) != want {
						errs <- fmt.Errorf("got %q, want %q", b, want)
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			if n := o.conns.Load(); n > 2 {
				t.Errorf("backend saw %d connections for 42 requests, want 1 (2 at most): not multiplexed", n)
			}

			checkH2Streaming(t, addr)
		})
	}
}

// checkH2Streaming sends a chunked body piece by piece over a raw client
// connection and reads each piece's echo before sending the next: the
// exchange is full duplex through the proxy. Then the trailers.
func checkH2Streaming(t *testing.T, addr string) {
	t.Helper()
	nc := testnet.Dial(t, addr, testTimeout)
	defer nc.Close() // closed on return: callers make many
	io.WriteString(nc, "POST /echo HTTP/1.1\r\nHost: x\r\nTE: trailers\r\nTransfer-Encoding: chunked\r\n\r\n")
	br := bufio.NewReader(nc)
	head := readHeadString(t, br)
	if !strings.HasPrefix(head, "HTTP/1.1 200 ") || !strings.Contains(head, "Transfer-Encoding: chunked") ||
		!strings.Contains(head, "X-Seen-Te: trailers") {
		t.Fatalf("head %q, want 200 chunked, TE: trailers seen upstream", head)
	}
	for i := range 5 {
		piece := fmt.Sprintf("piece-%d", i)
		fmt.Fprintf(nc, "%x\r\n%s\r\n", len(piece), piece)
		var got strings.Builder
		for got.Len() < len(piece) {
			line, err := br.ReadString('\n')
			if err != nil {
				t.Fatalf("piece %d: %v", i, err)
			}
			var n int
			if _, err := fmt.Sscanf(line, "%x", &n); err != nil || n == 0 {
				t.Fatalf("piece %d: chunk line %q", i, line)
			}
			b := make([]byte, n+2)
			if _, err := io.ReadFull(br, b); err != nil {
				t.Fatal(err)
			}
			got.Write(b[:n])
		}
		if got.String() != piece {
			t.Fatalf("echo %q, want %q", got.String(), piece)
		}
	}
	io.WriteString(nc, "0\r\n\r\n")
	var rest strings.Builder
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("after %q: %v", rest.String(), err)
		}
		rest.WriteString(line)
		if line == "\r\n" {
			break
		}
	}
	if rest.String() != "0\r\nGrpc-Status: 0\r\n\r\n" {
		t.Fatalf("end of body %q, want the last chunk and Grpc-Status", rest.String())
	}
}

// TestH2UpstreamFailover: a refused h2c target is failed over, as for
// HTTP/1.1, and counts as a connect failure.
func TestH2UpstreamFailover(t *testing.T) {
	testenv.CheckGoroutines(t)
	o := startH2Origin(t, false)
	deadAddr := testnet.RefusingAddr(t) // connections to it are refused
	addr, _ := startH2Proxy(t, []string{deadAddr, o.addr}, o)
	c := client(t)
	for i := range 6 {
		req, _ := http.NewRequest("GET", fmt.Sprintf("http://%s/f/%d", addr, i), nil)
		if resp, body := get(t, c, req); resp.StatusCode != 200 || string(body) != fmt.Sprintf("h2 GET /f/%d", i) {
			t.Fatalf("request %d: %d %q", i, resp.StatusCode, body)
		}
	}
}

// TestH2UpstreamALPN: an h2 target whose TLS server does not offer h2 is
// a failed connect (502), not an HTTP/1.1 exchange in disguise.
func TestH2UpstreamALPN(t *testing.T) {
	testenv.CheckGoroutines(t)
	ca := testcert.NewCA(t, "h1 CA")
	leaf := ca.Leaf(t, "h1", []string{"h2.example"}, time.Time{}, time.Time{})
	l, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{leaf.TLS}, NextProtos: []string{"http/1.1"}})
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h2Handler, ReadHeaderTimeout: testTimeout}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	addr, _ := startH2Proxy(t, []string{l.Addr().String()}, &h2Origin{ca: ca})
	req, _ := http.NewRequest("GET", "http://"+addr+"/", nil)
	if resp, body := get(t, client(t), req); resp.StatusCode != 502 {
		t.Fatalf("got %d %q, want 502", resp.StatusCode, body)
	}
}

// TestH2UpstreamProbe: active checks of h2c and h2 targets speak HTTP/2
// (a backend that speaks only HTTP/2 would fail an HTTP/1.1 GET).
func TestH2UpstreamProbe(t *testing.T) {
	testenv.CheckGoroutines(t)
	for _, useTLS := range []bool{false, true} {
		o := startH2Origin(t, useTLS)
		uo := UpstreamOptions{Name: "h2", Targets: []string{o.addr}, HTTP2: true}
		if o.ca != nil {
			uo.TLS = &tls.Config{RootCAs: o.ca.Pool, ServerName: "h2.example"}
		}
		up, err := NewUpstream(uo)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		status, err := up.probe(ctx, up.pool.Targets()[0])
		cancel()
		up.Close()
		if err != nil || status != 200 {
			t.Fatalf("tls=%v: probe %d %v, want 200", useTLS, status, err)
		}
	}
}

// TestH2UpstreamCap: max_conns_per_target caps the streams in flight to an
// HTTP/2 target (the connections are multiplexed, so the cap is on
// requests, as the pool counts them), and the queue serves the rest.
func TestH2UpstreamCap(t *testing.T) {
	testenv.CheckGoroutines(t)
	const (
		capacity = 2
		clients  = 10
	)
	var peak atomic.Int32
	l := testnet.Listen(t)
	srv := &http.Server{ReadHeaderTimeout: testTimeout, Protocols: new(http.Protocols), Handler: peakHandler(&peak)}
	srv.Protocols.SetUnencryptedHTTP2(true)
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	addr, _ := startProxy(t, UpstreamOptions{Targets: []string{l.Addr().String()}, HTTP2: true,
		Policy: upstream.Options{MaxConnsPerTarget: capacity, QueueTimeout: testTimeout}}, server.Options{})
	if n := fanOut(t, clients, addr); n > 0 {
		t.Errorf("%d requests failed, want all served from the queue", n)
	}
	if p := peak.Load(); p > capacity || p == 0 {
		t.Errorf("the target saw %d streams at once, cap %d", p, capacity)
	}
}

// TestH2UpstreamRetry5xx: the retry policy applies to HTTP/2 targets: a
// body-less GET answered 503 goes to the other target, while a POST with a
// body (streamed, so not replayable) gets the 503 it was answered.
func TestH2UpstreamRetry5xx(t *testing.T) {
	testenv.CheckGoroutines(t)
	var badHits atomic.Int32
	l := testnet.Listen(t)
	bad := &http.Server{ReadHeaderTimeout: testTimeout, Protocols: new(http.Protocols),
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			badHits.Add(1)
			io.Copy(io.Discard, r.Body)
			w.WriteHeader(503)
		})}
	bad.Protocols.SetUnencryptedHTTP2(true)
	go bad.Serve(l)
	t.Cleanup(func() { bad.Close() })
	good := startH2Origin(t, false)
	on, err := upstream.ParseRetryOn([]string{"503"})
	if err != nil {
		t.Fatal(err)
	}
	addr, _ := startProxy(t, UpstreamOptions{Targets: []string{l.Addr().String(), good.addr}, HTTP2: true,
		Policy: upstream.Options{Passive: upstream.PassiveOptions{Disabled: true},
			Retry: upstream.RetryPolicy{Attempts: 1, On: on, BudgetPercent: 100, Backoff: time.Millisecond}}}, server.Options{})
	c := client(t)
	for i := range 4 {
		req, _ := http.NewRequest("GET", fmt.Sprintf("http://%s/r/%d", addr, i), nil)
		if resp, body := get(t, c, req); resp.StatusCode != 200 {
			t.Fatalf("GET %d: %d %q, want the other target's 200", i, resp.StatusCode, body)
		}
	}
	if n := badHits.Load(); n == 0 {
		t.Fatal("the 503 target was never tried: the test proves nothing")
	}
	saw503 := false
	for i := range 4 {
		req, _ := http.NewRequest("POST", fmt.Sprintf("http://%s/echo", addr), strings.NewReader(fmt.Sprint("body ", i)))
		resp, _ := get(t, c, req)
		saw503 = saw503 || resp.StatusCode == 503
	}
	if !saw503 {
		t.Error("no POST got the 503: a streamed body was replayed")
	}
}
