package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"

	"github.com/simdedge/simdedge/internal/testcert"
)

func h3ConfigFile(t *testing.T, file, engine, backend, body string, cert *testcert.Pair) {
	t.Helper()
	cfg := fmt.Sprintf(`engine: %s
listeners:
  - address: "127.0.0.1:0"
    tls:
      certificates: [{cert: %q, key: %q}]
    http3: true
http3:
  max_streams: 50
  alt_svc_max_age: 1h
upstreams:
  - name: back
    targets: [%q]
routes:
  - match: {path: /xfp}
    proxy: {upstream: back}
  - match: {path: /echo}
    echo: {}
  - match: {path_prefix: /}
    respond: {status: 200, body: %q}
`, engine, cert.CertFile, cert.KeyFile, backend, body)
	if err := os.WriteFile(file, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestServeHTTP3: a TLS listener with http3 serves QUIC on its port: the
// TCP answers advertise it (Alt-Svc with the configured max age), HTTP/3
// requests reach the routes and the proxy (X-Forwarded-Proto https), and
// SIGHUP changes the routes and the certificate for HTTP/3 too; on both
// engines (the TCP side's).
func TestServeHTTP3(t *testing.T) {
	for _, engine := range []string{"loop", "goroutine"} {
		t.Run(engine, func(t *testing.T) { testServeHTTP3(t, engine) })
	}
}

func testServeHTTP3(t *testing.T, engine string) {
	s := newCertServe(t, "h3 CA", func(r *http.Request) string { return r.Header.Get("X-Forwarded-Proto") + " " + r.Header.Get("Via") })
	ca, file := s.ca, s.file
	h3ConfigFile(t, file, engine, s.backend, "one", s.a1)
	addrs := startServeAll(t, "-config", file)
	if len(addrs) != 2 || !strings.HasPrefix(addrs[1], "udp+h3://") {
		t.Fatalf("addresses %v", addrs)
	}
	tcpAddr, udpAddr := addrs[0], strings.TrimPrefix(addrs[1], "udp+h3://")
	if tcpAddr != udpAddr {
		t.Fatalf("tcp %s and udp %s differ", tcpAddr, udpAddr)
	}
	_, port, _ := net.SplitHostPort(tcpAddr)
	c1 := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool, ServerName: "a.example"}}}
	defer c1.CloseIdleConnections()
	for _, path := range []string{"/", "/xfp"} { // inline on the loop, and proxied
		resp, err := c1.Get("https://" + tcpAddr + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got, want := resp.Header.Get("Alt-Svc"), `h3=":`+port+`"; ma=3600`; got != want {
			t.Errorf("%s: Alt-Svc %q, want %q", path, got, want)
		}
	}
	h3get := func(path string) (int, string, string) {
		tr := &http3.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool, ServerName: "a.example"}, QUICConfig: &quic.Config{}}
		defer tr.Close()
		c := &http.Client{Timeout: 10 * time.Second, Transport: tr}
		resp, err := c.Get("https://" + udpAddr + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), resp.Proto
	}
	if code, body, proto := h3get("/"); code != 200 || body != "one" || proto != "HTTP/3.0" {
		t.Errorf("respond: %d %q %s", code, body, proto)
	}
	if code, body, _ := h3get("/xfp"); code != 200 || body != "https 3 simdedge" {
		t.Errorf("proxy: %d %q", code, body)
	}
	if code, body, _ := h3get("/echo"); code != 200 || !strings.Contains(body, `"version":"HTTP/3"`) {
		t.Errorf("echo: %d %q", code, body)
	}
	serial := func() string {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		c, err := quic.DialAddr(ctx, udpAddr, &tls.Config{RootCAs: ca.Pool, ServerName: "a.example", NextProtos: []string{"h3"}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer c.CloseWithError(0, "")
		return c.ConnectionState().TLS.PeerCertificates[0].SerialNumber.String()
	}
	s.reload(t, serial, "HTTP/3 ", func() { h3ConfigFile(t, file, engine, s.backend, "two", s.a2) })
	if code, body, _ := h3get("/"); code != 200 || body != "two" {
		t.Errorf("after reload: %d %q", code, body)
	}
}
