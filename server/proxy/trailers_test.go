package proxy

import (
	"bufio"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/simdedge/simdedge/internal/testenv"
	"github.com/simdedge/simdedge/internal/testnet"
	"github.com/simdedge/simdedge/server"
)

// trailerOrigin answers with a chunked body and trailers: Grpc-Status
// and Grpc-Message declared in Trailer, X-Late announced by net/http's
// TrailerPrefix, and Set-Cookie, which RFC 9110 §6.5.1 keeps out of
// trailers and the proxy must drop.
var trailerOrigin = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Trailer", "Grpc-Status, Grpc-Message")
	body := "hi"
	if r.URL.Path == "/big" {
		body = strings.Repeat("0123456789abcdef", 100<<10/16)
	}
	io.WriteString(w, body)
	w.(http.Flusher).Flush() // chunked even when small
	w.Header().Set("Grpc-Status", "0")
	w.Header().Set("Grpc-Message", "all good")
	w.Header().Set(http.TrailerPrefix+"X-Late", "yes")
	w.Header().Set(http.TrailerPrefix+"Set-Cookie", "a=b")
})

// TestTrailersForwarded: a chunked upstream response's trailers reach a
// client that sent "TE: trailers", on both proxy paths (the loop-proxy run
// relays the small body on the loop, the big one too), and are dropped for
// a client that did not (RFC 9110 §6.5.1). Before, trailers were always
// dropped.
func TestTrailersForwarded(t *testing.T) {
	testenv.CheckGoroutines(t)
	o := startOrigin(t, trailerOrigin)
	addr, _ := startProxy(t, UpstreamOptions{Name: "app", Targets: []string{o.addr}}, server.Options{})
	c := testnet.Dial(t, addr, testTimeout)
	br := bufio.NewReader(c)
	for _, path := range []string{"/small", "/big"} {
		for _, te := range []string{"TE: trailers\r\n", "TE: gzip;q=0.5, Trailers\r\n", ""} {
			io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: x\r\n"+te+"\r\n")
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatal(err)
			}
			b, err := io.ReadAll(resp.Body)
			if err != nil || len(b) < 2 {
				t.Fatalf("%s %q: body %d bytes %v", path, te, len(b), err)
			}
			if te == "" {
				// The Trailer field passes (net/http lists its
				// names as keys without values); no value may.
				for k, v := range resp.Trailer {
					if len(v) != 0 {
						t.Errorf("%s without TE: trailer %s: %q, want none", path, k, v)
					}
				}
				continue
			}
			tr := resp.Trailer
			if tr.Get("Grpc-Status") != "0" || tr.Get("Grpc-Message") != "all good" || tr.Get("X-Late") != "yes" {
				t.Errorf("%s %q: trailers %v, want Grpc-Status, Grpc-Message, X-Late", path, te, tr)
			}
			if tr.Get("Set-Cookie") != "" {
				t.Errorf("%s: Set-Cookie forwarded as a trailer", path)
			}
		}
	}
}

// TestTrailersHeldBody: a small chunked response that arrives whole, with
// its trailers, is held by the proxy and sent at the end: chunked, with the
// trailers, for a TE: trailers client (framing fields among them dropped),
// with a Content-Length and no trailers for another client.
func TestTrailersHeldBody(t *testing.T) {
	testenv.CheckGoroutines(t)
	l := testnet.Listen(t)
	done := make(chan struct{})
	t.Cleanup(func() { l.Close(); <-done })
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.SetDeadline(time.Now().Add(testTimeout))
			br := bufio.NewReader(c)
			for {
				if _, err := http.ReadRequest(br); err != nil {
					break
				}
				io.WriteString(c, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n3\r\n!!!\r\n0\r\nX-T: 1\r\nContent-Length: 9\r\nTransfer-Encoding: gzip\r\n\r\n")
			}
			c.Close()
		}
	}()
	addr, _ := startProxy(t, UpstreamOptions{Name: "app", Targets: []string{l.Addr().String()}}, server.Options{})
	c := testnet.Dial(t, addr, testTimeout)
	br := bufio.NewReader(c)
	for _, te := range []string{"TE: trailers\r\n", "", "TE: trailers\r\n"} {
		io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n"+te+"\r\n")
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		if err != nil || string(b) != "hi!!!" {
			t.Fatalf("%q: body %q %v", te, b, err)
		}
		if te == "" {
			if resp.ContentLength != 5 || len(resp.Trailer) != 0 {
				t.Errorf("without TE: length %d trailers %v, want Content-Length 5 and none", resp.ContentLength, resp.Trailer)
			}
			continue
		}
		if len(resp.TransferEncoding) != 1 || resp.Trailer.Get("X-T") != "1" || len(resp.Trailer) != 1 {
			t.Errorf("TE: trailers: framing %v trailers %v, want chunked with X-T only", resp.TransferEncoding, resp.Trailer)
		}
	}
}
