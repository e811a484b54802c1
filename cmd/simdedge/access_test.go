package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/simdedge/simdedge/internal/testenv"
	"github.com/simdedge/simdedge/internal/testnet"
)

// TestServeProxyProtocol: listeners with proxy_protocol on both engines,
// behind a real HAProxy (send-proxy-v2) and curl (--haproxy-protocol, v1):
// the client address the PROXY header names reaches the upstream in
// X-Forwarded-For and decides a route's deny list; a trusted peer without
// a header is closed.
func TestServeProxyProtocol(t *testing.T) {
	curl := testenv.Command(t, "curl")
	backend := startBackend(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "c.yaml")
	os.WriteFile(file, []byte(`trusted_proxies: ["127.0.0.1/32", "127.0.0.7/32"]
listeners:
  - {address: "127.0.0.1:0", engine: loop, proxy_protocol: true}
  - {address: "127.0.0.1:0", engine: goroutine, proxy_protocol: true}
upstreams:
  - {name: b, targets: ["`+backend+`"]}
routes:
  - match: {path_prefix: /deny}
    deny: ["127.0.0.9/32"]
    respond: {status: 200, body: "ok"}
  - match: {path_prefix: /}
    proxy: {upstream: b}
`), 0o644)
	addrs := startServeAll(t, "-config", file)
	for _, addr := range addrs {
		// curl from 127.0.0.7 (trusted) sends a v1 header naming itself.
		out, err := exec.Command(curl, "-s", "--max-time", "10", "--haproxy-protocol", "--interface", "127.0.0.7", "http://"+addr+"/x").CombinedOutput()
		if err != nil || string(out) != "xff=127.0.0.7" {
			t.Errorf("%s: curl --haproxy-protocol: %q %v", addr, out, err)
		}
		// A trusted peer without a header is closed.
		out, err = exec.Command(curl, "-s", "--max-time", "10", "http://"+addr+"/x").CombinedOutput()
		if err == nil {
			t.Errorf("%s: trusted peer without a header answered %q", addr, out)
		}
	}
	haproxy, err := exec.LookPath("haproxy")
	if err != nil {
		if os.Getenv("REQUIRE_HAPROXY") != "" {
			t.Fatal("haproxy missing and REQUIRE_HAPROXY is set (apt-get install haproxy)")
		}
		t.Skip("haproxy not installed: the HAProxy half is skipped")
	}
	for _, addr := range addrs {
		front := freeAddr(t)
		cfg := filepath.Join(dir, "haproxy.cfg")
		os.WriteFile(cfg, []byte(fmt.Sprintf(`global
  maxconn 100
defaults
  mode tcp
  timeout connect 5s
  timeout client 10s
  timeout server 10s
frontend f
  bind %s
  default_backend b
backend b
  server s %s send-proxy-v2 source 127.0.0.1
`, front, addr)), 0o644)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		cmd := exec.CommandContext(ctx, haproxy, "-db", "-f", cfg)
		if err := cmd.Start(); err != nil {
			cancel()
			t.Fatal(err)
		}
		stop := func() {
			cmd.Process.Kill() // by PID: the process this test started
			cmd.Wait()
			cancel()
		}
		waitListening(t, front)
		for _, tc := range []struct{ src, path, want string }{
			{"127.0.0.8", "/x", "xff=127.0.0.8"},
			{"127.0.0.8", "/deny", "ok"},
			{"127.0.0.9", "/deny", "forbidden\n"},
		} {
			out, err := exec.Command(curl, "-s", "--max-time", "10", "--interface", tc.src, "http://"+front+tc.path).CombinedOutput()
			if err != nil || string(out) != tc.want {
				t.Errorf("%s via haproxy from %s %s: %q %v", addr, tc.src, tc.path, out, err)
			}
		}
		stop()
	}
}

// startBackend answers "xff=<X-Forwarded-For>".
func startBackend(t *testing.T) string {
	t.Helper()
	l := testnet.Listen(t)
	s := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "xff="+r.Header.Get("X-Forwarded-For"))
	}), ReadHeaderTimeout: 10 * time.Second}
	go s.Serve(l)
	t.Cleanup(func() { s.Close() })
	return l.Addr().String()
}

func waitListening(t *testing.T, addr string) {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s never listened", addr)
}
