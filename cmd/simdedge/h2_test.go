package main

import (
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/simdedge/simdedge/internal/testcert"
	"github.com/simdedge/simdedge/internal/testnet"
)

// TestServeHTTP2: the configuration's keys reach the listeners: a TLS
// listener offers h2 by default, one with `http2: false` does not, a plain
// one with `h2c: true` takes the preface and one without answers it 505.
func TestServeHTTP2(t *testing.T) {
	ca := testcert.NewCA(t, "h2 CA")
	cert := ca.Leaf(t, "a", []string{"a.example"}, time.Time{}, time.Time{})
	file := filepath.Join(t.TempDir(), "c.yaml")
	conf := fmt.Sprintf(`listeners:
  - address: "127.0.0.1:0"
    tls: {certificates: [{cert: %q, key: %q}]}
  - address: "127.0.0.1:0"
    tls: {certificates: [{cert: %q, key: %q}]}
    http2: false
  - address: "127.0.0.1:0"
    h2c: true
  - address: "127.0.0.1:0"
routes:
  - match: {path_prefix: /}
    respond: {status: 200, body: hi}
`, cert.CertFile, cert.KeyFile, cert.CertFile, cert.KeyFile)
	if err := os.WriteFile(file, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	addrs := startServeAll(t, "-config", file)
	if len(addrs) != 4 {
		t.Fatalf("addresses %v", addrs)
	}
	alpn := func(addr string) string {
		c, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: ca.Pool, ServerName: "a.example", NextProtos: []string{"h2", "http/1.1"}})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		return c.ConnectionState().NegotiatedProtocol
	}
	if p := alpn(addrs[0]); p != "h2" {
		t.Errorf("default TLS listener negotiated %q", p)
	}
	if p := alpn(addrs[1]); p != "http/1.1" {
		t.Errorf("http2: false negotiated %q", p)
	}
	h2s := &http.Client{Timeout: 10 * time.Second, Transport: testnet.H2Transport(&tls.Config{RootCAs: ca.Pool, ServerName: "a.example"})}
	h2c := &http.Client{Timeout: 10 * time.Second, Transport: testnet.H2Transport(nil)}
	for _, tc := range []struct {
		c   *http.Client
		url string
	}{{h2s, "https://" + addrs[0] + "/"}, {h2c, "http://" + addrs[2] + "/"}} {
		resp, err := tc.c.Get(tc.url)
		if err != nil {
			t.Fatalf("%s: %v", tc.url, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.ProtoMajor != 2 || string(b) != "hi" {
			t.Errorf("%s: proto %d body %q", tc.url, resp.ProtoMajor, b)
		}
	}
	c := testnet.Dial(t, addrs[3], 10*time.Second)
	io.WriteString(c, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
	b := make([]byte, 12)
	if _, err := io.ReadFull(c, b); err != nil || string(b) != "HTTP/1.1 505" {
		t.Errorf("preface without h2c: %q %v", b, err)
	}
}
