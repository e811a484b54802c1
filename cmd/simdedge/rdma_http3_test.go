//go:build rdma && cgo

package main

import (
	"bytes"
	"crypto/sha256"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
)

// TestHTTP3ToRDMABackend: an HTTP/3 client (quic-go's) -> simdedge's
// HTTP/3 listener -> the shared proxy -> an rdma:// upstream, with request
// bodies of several sizes carried whole both ways, on both engines.
func TestHTTP3ToRDMABackend(t *testing.T) {
	backend := rdmaBackend(t)
	for _, engine := range []string{"loop", "goroutine"} {
		t.Run(engine, func(t *testing.T) {
			s := newCertServe(t, "h3 rdma CA", func(*http.Request) string { return "" })
			h3ConfigFile(t, s.file, engine, "rdma://"+backend+"?provider=tcp&credits=8&message_size=8192", "one", s.a1)
			addrs := startServeAll(t, "-config", s.file)
			if len(addrs) != 2 || !strings.HasPrefix(addrs[1], "udp+h3://") {
				t.Fatalf("addresses %v", addrs)
			}
			udpAddr := strings.TrimPrefix(addrs[1], "udp+h3://")
			tr := &http3.Transport{TLSClientConfig: &tls.Config{RootCAs: s.ca.Pool, ServerName: "a.example"}, QUICConfig: &quic.Config{}}
			defer tr.Close()
			c := &http.Client{Timeout: 30 * time.Second, Transport: tr}
			for _, size := range []int{0, 100, 20000, 300000} {
				body := bytes.Repeat([]byte{'q'}, size)
				resp, err := c.Post("https://"+udpAddr+"/xfp", "application/octet-stream", bytes.NewReader(body))
				if err != nil {
					t.Fatalf("%d-byte body: %v", size, err)
				}
				got, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				sum := sha256.Sum256(body)
				want := fmt.Sprintf("POST /xfp %d %x", size, sum[:8])
				if err != nil || resp.StatusCode != 200 || string(got) != want || resp.Header.Get("X-Backend") != "rdma" || resp.Proto != "HTTP/3.0" {
					t.Fatalf("%d-byte body: %d %s %q (%v), want %q from rdma", size, resp.StatusCode, resp.Proto, got, err, want)
				}
			}
		})
	}
}
