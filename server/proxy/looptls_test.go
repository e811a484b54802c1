//go:build linux

package proxy

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/simdedge/simdedge/internal/testcert"
	"github.com/simdedge/simdedge/internal/testenv"
	"github.com/simdedge/simdedge/internal/testnet"
	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/edgetls"
	"github.com/simdedge/simdedge/server/internal/servetest"
)

// TestLoopProxyTLS: the loop proxies requests that arrived over TLS
// terminated on the loop itself (server/looptls_linux.go): pipelined
// requests, proxied and inline mixed, answered in order with
// X-Forwarded-Proto https, then a 4 MB proxied response whole.
func TestLoopProxyTLS(t *testing.T) {
	needLoopProxyRun(t)
	testenv.CheckGoroutines(t)
	big := bytes.Repeat([]byte("0123456789abcdef"), 4<<20/16)
	o := startOrigin(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/big" {
			w.Write(big)
			return
		}
		io.WriteString(w, "origin "+r.URL.Path+" "+r.Header.Get("X-Forwarded-Proto"))
	}))
	ca := testcert.NewCA(t, "loop proxy CA")
	leaf := ca.Leaf(t, "a", []string{"a.example"}, time.Time{}, time.Time{})
	st, err := edgetls.New(edgetls.Options{Certificates: []edgetls.CertFiles{{Cert: leaf.CertFile, Key: leaf.KeyFile}}})
	if err != nil {
		t.Fatal(err)
	}
	up := newUpstream(t, UpstreamOptions{Targets: []string{o.addr}})
	s := server.New(server.Options{Handler: loopMux{New(up, Options{})}, LoopProxy: true})
	addr := servetest.ServeTLS(t, s, server.EngineLoop, server.TLSOptions{Config: st.TLSConfig(), HandshakeTimeout: st.HandshakeTimeout()})

	c, err := tls.DialWithDialer(&net.Dialer{Timeout: testTimeout}, "tcp", addr,
		&tls.Config{ServerName: "a.example", RootCAs: ca.Pool})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(testTimeout))
	const n = 40
	reqs, want := mixedPipeline(n, " https")
	br := bufio.NewReader(c)
	for i, r := range testnet.Pipeline(t, c, br, reqs) {
		if r.Status != 200 || r.Body != want[i] {
			t.Fatalf("response %d: %d %q, want %q", i, r.Status, r.Body, want[i])
		}
	}
	c.Write([]byte("GET /big HTTP/1.1\r\nHost: x\r\n\r\n"))
	time.Sleep(100 * time.Millisecond) // the client's socket fills: back-pressure
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil || !bytes.Equal(b, big) {
		t.Fatalf("big response: %d bytes, %v; want %d equal bytes", len(b), err, len(big))
	}
	if got := pooledOnGoroutines(up); got != 0 {
		t.Errorf("%d upstream connections pooled on goroutines, want 0 (the loop proxied)", got)
	}
}
