package proxy

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/simdedge/simdedge/internal/testcert"
	"github.com/simdedge/simdedge/internal/testenv"
	"github.com/simdedge/simdedge/internal/testnet"
	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/internal/servetest"
)

// startProxyH2 serves a proxy to targets on an h2c listener and on a TLS
// listener offering h2 by ALPN; it returns both addresses and the CA.
func startProxyH2(t *testing.T, targets []string) (h2cAddr, tlsAddr string, ca *testcert.CA) {
	t.Helper()
	return startProxyH2With(t, UpstreamOptions{Targets: targets})
}

// startProxyH2With is startProxyH2 for an upstream made of uo.
func startProxyH2With(t *testing.T, uo UpstreamOptions) (h2cAddr, tlsAddr string, ca *testcert.CA) {
	t.Helper()
	up, err := NewUpstream(uo)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(up.Close) // after the server's Shutdown (cleanups run last first)
	return serveH2Edge(t, New(up, Options{}))
}

// serveH2Edge serves h on an h2c listener and on a TLS listener offering
// h2 by ALPN (the certificate names edge.example), on the test engine.
func serveH2Edge(t *testing.T, h server.Handler) (h2cAddr, tlsAddr string, ca *testcert.CA) {
	t.Helper()
	s := server.New(server.Options{Handler: h, LoopProxy: testLoopProxy})
	ca = testcert.NewCA(t, "edge CA")
	leaf := ca.Leaf(t, "edge", []string{"edge.example"}, time.Time{}, time.Time{})
	h2cAddr = servetest.ServeH2C(t, s, testEngine)
	tlsAddr = servetest.ServeTLS(t, s, testEngine, server.TLSOptions{Config: &tls.Config{Certificates: []tls.Certificate{leaf.TLS}, NextProtos: []string{"h2", "http/1.1"}}})
	return h2cAddr, tlsAddr, ca
}

// h1OriginForH2 answers with what it received: method, target, Host, the
// forwarded headers it cares about, and the body's length and sum.
func h1OriginForH2(t *testing.T) *origin {
	return startOrigin(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var sum byte
		for _, c := range b {
			sum += c
		}
		w.Header().Set("X-Origin-Proto", r.Proto)
		w.Header().Set("X-Origin-Via", r.Header.Get("Via"))
		fmt.Fprintf(w, "%s %s host=%s xff=%s cookie=%q len=%d sum=%d", r.Method, r.URL.RequestURI(), r.Host,
			r.Header.Get("X-Forwarded-For"), r.Header.Get("Cookie"), len(b), sum)
		if r.URL.Path == "/big" {
			w.Write(bytes.Repeat([]byte("y"), 2<<20))
		}
	}))
}

// TestH2ProxyToHTTP1: HTTP/2 clients (x/net's, curl, nghttp) through the
// proxy to an HTTP/1.1 origin, over h2c and TLS, on every engine: heads,
// cookie crumbs joined, uploads of unknown length, a 2 MiB download past
// the flow-control windows, and many streams at once on one connection.
func TestH2ProxyToHTTP1(t *testing.T) {
	testenv.CheckGoroutines(t)
	o := h1OriginForH2(t)
	h2cAddr, tlsAddr, ca := startProxyH2(t, []string{o.addr})
	h2c := &http.Client{Timeout: testTimeout, Transport: testnet.H2Transport(nil)}
	h2s := &http.Client{Timeout: testTimeout, Transport: testnet.H2Transport(&tls.Config{ServerName: "edge.example", RootCAs: ca.Pool})}
	for _, tc := range []struct {
		name, base string
		c          *http.Client
	}{{"h2c", "http://" + h2cAddr, h2c}, {"tls", "https://" + tlsAddr, h2s}} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest("GET", tc.base+"/a?b=c", nil)
			req.Header.Add("Cookie", "x=1")
			req.Header.Add("Cookie", "y=2")
			resp, body := get(t, tc.c, req)
			host := strings.TrimPrefix(strings.TrimPrefix(tc.base, "http://"), "https://")
			want := fmt.Sprintf("GET /a?b=c host=%s xff=127.0.0.1 cookie=%q len=0 sum=0", host, "x=1; y=2")
			if resp.ProtoMajor != 2 || string(body) != want || resp.Header.Get("X-Origin-Proto") != "HTTP/1.1" || !strings.HasPrefix(resp.Header.Get("X-Origin-Via"), "2 ") {
				t.Fatalf("GET: proto %d %q (via %q), want %q", resp.ProtoMajor, body, resp.Header.Get("X-Origin-Via"), want)
			}
			// An upload of unknown length goes chunked to the origin.
			up := bytes.Repeat([]byte{3}, 200<<10)
			req, _ = http.NewRequest("POST", tc.base+"/up", io.MultiReader(bytes.NewReader(up)))
			_, body = get(t, tc.c, req)
			if !strings.HasSuffix(string(body), fmt.Sprintf("len=%d sum=%d", len(up), byte(0))) {
				t.Fatalf("POST: %q", body)
			}
			resp, body = get(t, tc.c, mustReq(t, "GET", tc.base+"/big"))
			if len(body) < 2<<20 || resp.StatusCode != 200 {
				t.Fatalf("GET /big: %d %d bytes", resp.StatusCode, len(body))
			}
			// 50 streams at once share the connection.
			errs := make(chan error, 50)
			for i := 0; i < 50; i++ {
				go func(i int) {
					resp, err := tc.c.Get(fmt.Sprintf("%s/s%d", tc.base, i))
					if err != nil {
						errs <- err
						return
					}
					b, err := io.ReadAll(resp.Body)
					resp.Body.Close()
					if err == nil && !strings.HasPrefix(string(b), fmt.Sprintf("GET /s%d ", i)) {
						err = fmt.Errorf("stream %d got %q", i, b)
					}
					errs <- err
				}(i)
			}
			for i := 0; i < 50; i++ {
				if err := <-errs; err != nil {
					t.Error(err)
				}
			}
		})
	}
	t.Run("curl", func(t *testing.T) {
		curl := testenv.Command(t, "curl")
		file := filepath.Join(t.TempDir(), "up")
		os.WriteFile(file, bytes.Repeat([]byte{1}, 100<<10), 0o644)
		caFile := ca.File
		for _, args := range [][]string{
			{"--http2-prior-knowledge", "http://" + h2cAddr + "/c"},
			{"--http2", "--cacert", caFile, "--resolve", "edge.example:" + port(tlsAddr) + ":127.0.0.1", "https://edge.example:" + port(tlsAddr) + "/c"},
		} {
			ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
			out, err := exec.CommandContext(ctx, curl, append([]string{"-sS", "-w", " v%{http_version}", "--data-binary", "@" + file}, args...)...).CombinedOutput()
			cancel()
			if err != nil || !strings.HasPrefix(string(out), "POST /c ") || !strings.HasSuffix(string(out), fmt.Sprintf("len=%d sum=%d v2", 100<<10, byte(0))) {
				t.Errorf("curl %v: %q %v", args, out, err)
			}
		}
	})
	t.Run("nghttp", func(t *testing.T) {
		nghttp := testenv.Command(t, "nghttp")
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		out, err := exec.CommandContext(ctx, nghttp, "http://"+h2cAddr+"/n", "https://"+tlsAddr+"/n").CombinedOutput()
		if err != nil || strings.Count(string(out), "GET /n ") != 2 {
			t.Errorf("nghttp: %q %v", out, err)
		}
	})
}

func mustReq(t *testing.T, method, url string) *http.Request {
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

func port(addr string) string {
	_, p, _ := net.SplitHostPort(addr)
	return p
}

// TestH2ProxyTrailers: an HTTP/1.1 origin's chunked trailers reach an
// HTTP/2 client as the stream's last HEADERS frame (gRPC's grpc-status
// travels that way), over h2c and TLS, on every engine.
func TestH2ProxyTrailers(t *testing.T) {
	o := startOrigin(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Trailer", "Grpc-Status, X-Checksum")
		io.WriteString(w, "part one ")
		w.(http.Flusher).Flush() // chunked: no Content-Length
		io.WriteString(w, "part two")
		w.Header().Set("Grpc-Status", "0")
		w.Header().Set("X-Checksum", "abc")
	}))
	h2cAddr, tlsAddr, ca := startProxyH2(t, []string{o.addr})
	h2c := &http.Client{Timeout: testTimeout, Transport: testnet.H2Transport(nil)}
	h2s := &http.Client{Timeout: testTimeout, Transport: testnet.H2Transport(&tls.Config{ServerName: "edge.example", RootCAs: ca.Pool})}
	for _, tc := range []struct {
		name, base string
		c          *http.Client
	}{{"h2c", "http://" + h2cAddr, h2c}, {"tls", "https://" + tlsAddr, h2s}} {
		req := mustReq(t, "GET", tc.base+"/t")
		req.Header.Set("TE", "trailers")
		resp, body := get(t, tc.c, req)
		if resp.ProtoMajor != 2 || string(body) != "part one part two" {
			t.Fatalf("%s: proto %d body %q", tc.name, resp.ProtoMajor, body)
		}
		if g, x := resp.Trailer.Get("Grpc-Status"), resp.Trailer.Get("X-Checksum"); g != "0" || x != "abc" {
			t.Errorf("%s: trailers %v, want Grpc-Status 0 and X-Checksum abc", tc.name, resp.Trailer)
		}
	}
}
