package server

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"

	"github.com/simdedge/simdedge/internal/h3test"
	"github.com/simdedge/simdedge/internal/testenv"
	"github.com/simdedge/simdedge/internal/testnet"
	"github.com/simdedge/simdedge/server/edgetls"
)

// startH3 serves h over HTTP/3 on a loopback UDP socket with the PKI's
// certificate for a.example, and returns the server and address.
func startH3(t testing.TB, h Handler, so Options, o HTTP3Options) (*Server, *pki, string) {
	t.Helper()
	testenv.CheckGoroutines(t)
	p := newPKI(t)
	st, err := edgetls.New(edgetls.Options{Certificates: certFiles(p.a)})
	if err != nil {
		t.Fatal(err)
	}
	so.Handler = h
	s := New(so)
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.ServeHTTP3(pc, st.QUICConfig(), o) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		s.Shutdown(ctx)
		select {
		case err := <-done:
			if err != ErrServerClosed {
				t.Errorf("ServeHTTP3 returned %v", err)
			}
		case <-time.After(testTimeout):
			t.Errorf("ServeHTTP3 still running after Shutdown")
		}
		pc.Close()
	})
	return s, p, pc.LocalAddr().String()
}

// h3RawTLS is the raw client's TLS configuration (h3test's) for the PKI.
func h3RawTLS(p *pki) *tls.Config { return h3test.TLS(p.ca.Pool) }

// h3Client is quic-go's HTTP/3 client trusting the test CA, for a.example.
func h3Client(t testing.TB, p *pki) (*http.Client, *http3.Transport) {
	t.Helper()
	tr := &http3.Transport{
		TLSClientConfig: &tls.Config{RootCAs: p.ca.Pool, ServerName: "a.example"},
		QUICConfig:      &quic.Config{MaxIdleTimeout: testTimeout},
	}
	t.Cleanup(func() { tr.Close() })
	return &http.Client{Transport: tr, Timeout: testTimeout}, tr
}

func h3Do(t *testing.T, c *http.Client, method, url string, body io.Reader) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading body: %v", method, url, err)
	}
	return resp, b
}

// h3TestHandler is h2Handler plus a report of the protocol and TLS state.
func h3TestHandler() Handler {
	return HandlerFunc(func(w *ResponseWriter, r *Request) {
		if string(r.Target()) == "/proto" {
			st, ok := r.TLSConnectionState()
			fmt.Fprintf(w, "h3=%v h2=%v tls=%v alpn=%s ok=%v host=%s body=%d", r.HTTP3(), r.HTTP2(), r.TLS(), st.NegotiatedProtocol, ok, r.Host(), r.Head().Body)
			return
		}
		h2TestHandler{}.ServeEdge(w, r)
	})
}

// TestH3Basic: quic-go's client gets answers over HTTP/3; the request
// knows its protocol and TLS state; 1 MiB bodies go both ways.
func TestH3Basic(t *testing.T) {
	_, p, addr := startH3(t, h3TestHandler(), Options{}, HTTP3Options{})
	c, _ := h3Client(t, p)
	base := "https://" + addr
	resp, b := h3Do(t, c, "GET", base+"/proto", nil)
	if resp.StatusCode != 200 || resp.Proto != "HTTP/3.0" {
		t.Fatalf("status %d proto %s", resp.StatusCode, resp.Proto)
	}
	if want := "h3=true h2=false tls=true alpn=h3 ok=true host=" + addr + " body=0"; string(b) != want {
		t.Fatalf("body %q, want %q", b, want)
	}
	resp, b = h3Do(t, c, "GET", base+"/", nil)
	if resp.StatusCode != 200 || !strings.HasPrefix(string(b), "hello") || resp.ContentLength != int64(len(b)) {
		t.Fatalf("status %d body %q length %d", resp.StatusCode, b, resp.ContentLength)
	}
	if resp.Header.Get("Date") == "" {
		t.Error("no Date field")
	}
	resp, b = h3Do(t, c, "GET", base+"/big", nil)
	if resp.StatusCode != 200 || len(b) != h2BigSize {
		t.Fatalf("/big: status %d, %d bytes", resp.StatusCode, len(b))
	}
	up := bytes.Repeat([]byte("0123456789abcdef"), h2BigSize/16)
	resp, b = h3Do(t, c, "POST", base+"/echo", bytes.NewReader(up))
	if resp.StatusCode != 200 || !bytes.Equal(b, up) {
		t.Fatalf("echo: status %d, %d bytes back of %d", resp.StatusCode, len(b), len(up))
	}
	// A body of unknown length (no Content-Length: streamed).
	resp, b = h3Do(t, c, "POST", base+"/echo", io.MultiReader(bytes.NewReader(up[:1000]), strings.NewReader("end")))
	if resp.StatusCode != 200 || string(b) != string(up[:1000])+"end" {
		t.Fatalf("streamed echo: status %d, %d bytes", resp.StatusCode, len(b))
	}
	resp, _ = h3Do(t, c, "HEAD", base+"/", nil)
	if resp.StatusCode != 200 {
		t.Fatalf("HEAD: status %d", resp.StatusCode)
	}
}

// TestH3ConcurrentStreams: 100 requests at once on one connection.
func TestH3ConcurrentStreams(t *testing.T) {
	_, p, addr := startH3(t, h3TestHandler(), Options{}, HTTP3Options{})
	c, _ := h3Client(t, p)
	const n = 100
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := strings.Repeat(fmt.Sprint(i), 1000)
			resp, err := c.Post("https://"+addr+"/echo", "text/plain", strings.NewReader(body))
			if err != nil {
				errs <- err
				return
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			if err != nil || string(b) != body {
				errs <- fmt.Errorf("stream %d: %v, %d bytes", i, err, len(b))
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestH3AltSvc: every HTTP/1.1 and HTTP/2 response on a TLS listener with
// an Alt-Svc value carries it, whatever the handler did (a Reset keeps
// it), on every engine.
func TestH3AltSvc(t *testing.T) {
	testenv.CheckGoroutines(t)
	p := newPKI(t)
	st, err := edgetls.New(edgetls.Options{Certificates: certFiles(p.a), ALPN: []string{"h2", "http/1.1"}})
	if err != nil {
		t.Fatal(err)
	}
	s := New(Options{Handler: HandlerFunc(func(w *ResponseWriter, r *Request) {
		w.AddHeader("X-Dropped", "1")
		w.Reset()
		w.WriteString("ok")
	})})
	l := testnet.Listen(t)
	want := H3AltSvc(8443, 24*time.Hour)
	s.SetListenerAltSvc(l, want)
	serveTLSOn(t, s, l, st)
	if want != `h3=":8443"; ma=86400` {
		t.Fatalf("H3AltSvc = %q", want)
	}
	for _, h2 := range []bool{false, true} {
		c := &http.Client{Timeout: testTimeout, Transport: &http.Transport{
			TLSClientConfig: &tls.Config{RootCAs: p.ca.Pool, ServerName: "a.example"}, ForceAttemptHTTP2: h2}}
		for range 2 {
			resp, err := c.Get("https://" + l.Addr().String() + "/")
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if got := resp.Header.Get("Alt-Svc"); got != want || resp.ProtoMajor != map[bool]int{false: 1, true: 2}[h2] {
				t.Fatalf("%s: Alt-Svc %q, want %q", resp.Proto, got, want)
			}
		}
		c.CloseIdleConnections()
	}
}

// TestH3Trailers: trailers a handler sets go out as a last HEADERS frame
// after the body, small (in the write with the head) and large (after a
// body written on its own), and the stream encoder is reused cleanly.
func TestH3Trailers(t *testing.T) {
	h := HandlerFunc(func(w *ResponseWriter, r *Request) {
		if !w.EnableTrailers() {
			w.WriteHeader(500)
			return
		}
		n := 10
		if string(r.Target()) == "/big" {
			n = 100 << 10
		}
		w.Write(bytes.Repeat([]byte("t"), n))
		w.AddTrailer([]byte("Grpc-Status"), []byte("0"))
		w.AddTrailer([]byte("Connection"), []byte("close")) // connection-specific: dropped
	})
	_, p, addr := startH3(t, h, Options{}, HTTP3Options{})
	c, _ := h3Client(t, p)
	for range 2 {
		for _, path := range []string{"/small", "/big"} {
			req, _ := http.NewRequest("GET", "https://"+addr+path, nil)
			req.Header.Set("TE", "trailers")
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || resp.Trailer.Get("Grpc-Status") != "0" || resp.Trailer.Get("Connection") != "" || len(b) < 10 {
				t.Fatalf("%s: %d, %d bytes, trailers %v", path, resp.StatusCode, len(b), resp.Trailer)
			}
		}
	}
}
