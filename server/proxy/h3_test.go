package proxy

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"

	"github.com/simdedge/simdedge/internal/testcert"
	"github.com/simdedge/simdedge/internal/testenv"
	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/internal/servetest"
)

// h1Steps are the signals of the HTTP/1.1 origin's /steps: it read the
// first piece of the request body; the client read the first piece of the
// response.
// The first piece is over the body the proxy gathers to send with a
// length (maxBufferedBody): past it a chunked body streams.
const h1StepsFirst = 2 * maxBufferedBody

var h1Steps = struct{ gotFirst, sawFirst chan struct{} }{make(chan struct{}, 8), make(chan struct{}, 8)}

// h1DuplexEcho is an HTTP/1.1 origin that echoes the request body: one of
// known length whole (an HTTP/1.1 proxy writes the body before it reads
// the answer), a chunked one as it arrives (full duplex); it answers
// other paths with what it saw.
var h1DuplexEcho = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Proto", r.Proto)
	if r.URL.Path == "/steps" {
		// The request body streams: its first piece arrives while the
		// client holds the rest back. The answer streams: its first
		// piece reaches the client before the origin writes the rest.
		first := make([]byte, h1StepsFirst)
		io.ReadFull(r.Body, first)
		h1Steps.gotFirst <- struct{}{}
		io.Copy(io.Discard, r.Body)
		w.Write(first[:5])
		http.NewResponseController(w).Flush()
		select {
		case <-h1Steps.sawFirst:
		case <-time.After(testTimeout):
		}
		io.WriteString(w, "-end")
		return
	}
	if r.URL.Path != "/echo" {
		io.WriteString(w, "h1 "+r.Method+" "+r.URL.RequestURI()+" via="+r.Header.Get("Via")+" xfp="+r.Header.Get("X-Forwarded-Proto"))
		return
	}
	if r.ContentLength >= 0 {
		b, _ := io.ReadAll(r.Body)
		w.Write(b)
		return
	}
	rc := http.NewResponseController(w)
	rc.EnableFullDuplex()
	w.WriteHeader(200)
	rc.Flush()
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Body.Read(buf)
		if n > 0 {
			w.Write(buf[:n])
			rc.Flush()
		}
		if err != nil {
			return
		}
	}
})

// startH3Proxy serves a proxy to uo over HTTP/3 and returns its UDP
// address and a client for it.
func startH3Proxy(t *testing.T, uo UpstreamOptions) (string, *http.Client) {
	t.Helper()
	ca := testcert.NewCA(t, "h3 edge CA")
	leaf := ca.Leaf(t, "edge", []string{"edge.example"}, time.Time{}, time.Time{})
	up := newUpstream(t, uo)
	s := server.New(server.Options{Handler: New(up, Options{})})
	addr := servetest.ServeH3(t, s, server.H3TLSConfig(&tls.Config{Certificates: []tls.Certificate{leaf.TLS}}), server.HTTP3Options{})
	tr := &http3.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool, ServerName: "edge.example"}, QUICConfig: &quic.Config{}}
	t.Cleanup(func() { tr.Close() })
	return addr, &http.Client{Transport: tr, Timeout: testTimeout}
}

// TestH3Proxy: HTTP/3 requests reach HTTP/1.1, HTTPS, h2c and h2
// upstreams through the proxy: the upstream sees the forwarding fields
// (Via says 3), 1 MiB bodies go both ways, an HTTP/2 upstream's trailers
// come back, and a request body streams to the upstream while its echo
// streams back, piece by piece.
func TestH3Proxy(t *testing.T) {
	testenv.CheckGoroutines(t)
	h1 := httptest.NewServer(h1DuplexEcho)
	defer h1.Close()
	hs := httptest.NewTLSServer(h1DuplexEcho)
	defer hs.Close()
	h2c := startH2Origin(t, false)
	h2s := startH2Origin(t, true)
	cases := []struct {
		name string
		uo   UpstreamOptions
		want string
	}{
		{"http1", UpstreamOptions{Name: "h1", Targets: []string{strings.TrimPrefix(h1.URL, "http://")}}, "h1 GET /x via=3 simdedge xfp=https"},
		{"https", UpstreamOptions{Name: "hs", Targets: []string{strings.TrimPrefix(hs.URL, "https://")}, TLS: &tls.Config{InsecureSkipVerify: true}}, "h1 GET /x via=3 simdedge xfp=https"},
		{"h2c", UpstreamOptions{Name: "h2c", Targets: []string{h2c.addr}, HTTP2: true}, "h2 GET /x"},
		{"h2", UpstreamOptions{Name: "h2", Targets: []string{h2s.addr}, HTTP2: true, TLS: &tls.Config{RootCAs: h2s.ca.Pool, ServerName: "h2.example"}}, "h2 GET /x"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			addr, c := startH3Proxy(t, tc.uo)
			base := "https://" + addr
			resp, err := c.Get(base + "/x")
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || string(b) != tc.want {
				t.Fatalf("GET: %d %q, want %q", resp.StatusCode, b, tc.want)
			}
			big := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
			resp, err = c.Post(base+"/echo", "application/octet-stream", bytes.NewReader(big))
			if err != nil {
				t.Fatal(err)
			}
			b, err = io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil || !bytes.Equal(b, big) {
				t.Fatalf("1 MiB echo: %d bytes back of %d, %v", len(b), len(big), err)
			}
			if tc.uo.HTTP2 && resp.Trailer.Get("Grpc-Status") != "0" {
				t.Fatalf("the h2 upstream's trailers did not come back: %v", resp.Trailer)
			}
			if tc.uo.HTTP2 {
				checkH3Streaming(t, c, base+"/echo")
			} else {
				checkH3StreamingH1(t, c, base)
			}
		})
	}
}

// checkH3Streaming sends a body piece by piece and reads each piece's
// echo before sending the next: both directions stream through the
// proxy.
func checkH3Streaming(t *testing.T, c *http.Client, url string) {
	t.Helper()
	pr, pw := io.Pipe()
	defer pw.Close()
	req, _ := http.NewRequest("POST", url, pr)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	buf := make([]byte, 64)
	for i := range 5 {
		piece := fmt.Sprintf("piece-%d;", i)
		if _, err := pw.Write([]byte(piece)); err != nil {
			t.Fatal(err)
		}
		got := 0
		for got < len(piece) {
			n, err := resp.Body.Read(buf[got:len(piece)])
			if err != nil {
				t.Fatalf("piece %d: %v", i, err)
			}
			got += n
		}
		if string(buf[:got]) != piece {
			t.Fatalf("piece %d: got %q", i, buf[:got])
		}
	}
	pw.Close()
	if rest, _ := io.ReadAll(resp.Body); len(rest) != 0 {
		t.Fatalf("%d bytes after the pieces", len(rest))
	}
}

// checkH3StreamingH1 is checkH3Streaming for an HTTP/1.1 upstream, which
// answers once the request is whole: the request body reaches it piece by
// piece (past the part the proxy gathers), then the answer comes back
// piece by piece.
func checkH3StreamingH1(t *testing.T, c *http.Client, base string) {
	t.Helper()
	pr, pw := io.Pipe()
	defer pw.Close()
	req, _ := http.NewRequest("POST", base+"/steps", pr)
	type result struct {
		resp *http.Response
		err  error
	}
	rc := make(chan result, 1)
	go func() {
		resp, err := c.Do(req)
		rc <- result{resp, err}
	}()
	go pw.Write(bytes.Repeat([]byte("first"), h1StepsFirst/5+1)[:h1StepsFirst])
	select {
	case <-h1Steps.gotFirst:
	case <-time.After(testTimeout):
		t.Fatal("the first piece of the request body did not reach the upstream alone")
	}
	pw.Write([]byte("rest"))
	pw.Close()
	r := <-rc
	if r.err != nil {
		t.Fatal(r.err)
	}
	defer r.resp.Body.Close()
	buf := make([]byte, 5)
	if _, err := io.ReadFull(r.resp.Body, buf); err != nil || string(buf) != "first" {
		t.Fatalf("first piece of the answer: %q %v", buf, err)
	}
	h1Steps.sawFirst <- struct{}{}
	if rest, err := io.ReadAll(r.resp.Body); err != nil || string(rest) != "-end" {
		t.Fatalf("rest of the answer: %q %v", rest, err)
	}
}
