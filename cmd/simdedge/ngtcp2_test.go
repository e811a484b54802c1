package main

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/simdedge/simdedge/internal/h3test"
	"github.com/simdedge/simdedge/internal/testcert"
)

// TestNgtcp2Client: ngtcp2's client (another QUIC and HTTP/3 stack, on
// GnuTLS) against respond, echo, files and proxy routes: 1 MiB bodies both
// ways, and 100 requests at once on one connection.
func TestNgtcp2Client(t *testing.T) {
	bin := h3test.Ngtcp2(t)
	back := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if r.Method == "POST" {
			w.Write(b) // the body back, whole
			return
		}
		io.WriteString(w, "proxied "+r.Header.Get("Via"))
	}))
	defer back.Close()
	ca := testcert.NewCA(t, "ngtcp2 CA")
	leaf := ca.Leaf(t, "a", []string{"a.example"}, time.Time{}, time.Time{})
	dir := t.TempDir()
	big := make([]byte, 1<<20)
	rand.Read(big)
	os.MkdirAll(filepath.Join(dir, "www"), 0o755)
	os.WriteFile(filepath.Join(dir, "www", "big.bin"), big, 0o644)
	up := filepath.Join(dir, "up.bin")
	os.WriteFile(up, big, 0o644)
	file := filepath.Join(dir, "c.yaml")
	cfg := fmt.Sprintf(`listeners:
  - address: "127.0.0.1:0"
    tls:
      certificates: [{cert: %q, key: %q}]
    http3: true
limits:
  max_body_bytes: 4194304
upstreams:
  - name: back
    targets: [%q]
routes:
  - match: {path_prefix: /p/}
    proxy: {upstream: back}
  - match: {path: /echo}
    echo: {}
  - match: {path_prefix: /www/}
    files: {root: %q}
  - match: {path_prefix: /}
    respond: {status: 200, body: hi}
`, leaf.CertFile, leaf.KeyFile, strings.TrimPrefix(back.URL, "http://"), dir)
	if err := os.WriteFile(file, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	addrs := startServeAll(t, "-config", file)
	addr := strings.TrimPrefix(addrs[1], "udp+h3://")
	base := "https://a.example:" + addr[strings.LastIndexByte(addr, ':')+1:]

	dl := filepath.Join(dir, "dl")
	os.Mkdir(dl, 0o755)
	out := h3test.RunNgtcp2(t, nil, bin, addr, []string{"--download=" + dl}, base+"/r", base+"/p/x")
	st := h3test.Ngtcp2Status.FindAllStringSubmatch(out, -1)
	r, _ := os.ReadFile(filepath.Join(dl, "r"))
	x, _ := os.ReadFile(filepath.Join(dl, "x"))
	if len(st) != 2 || st[0][1] != "200" || st[1][1] != "200" || string(r) != "hi" || string(x) != "proxied 3 simdedge" {
		t.Fatalf("respond and proxy: %v %q %q\n%s", st, r, x, h3test.Tail(out, 3000))
	}
	// 1 MiB up: echo counts it; the proxy sends it back whole.
	h3test.RunNgtcp2(t, nil, bin, addr, []string{"-q", "-m", "POST", "-d", up, "--download=" + dl}, base+"/echo")
	if e, _ := os.ReadFile(filepath.Join(dl, "echo")); !bytes.Contains(e, []byte(`"body_len":1048576`)) || !bytes.Contains(e, []byte(`"version":"HTTP/3"`)) {
		t.Fatalf("1 MiB to echo: %s", e)
	}
	h3test.RunNgtcp2(t, nil, bin, addr, []string{"-q", "-m", "POST", "-d", up, "--download=" + dl}, base+"/p/back.bin")
	if got, _ := os.ReadFile(filepath.Join(dl, "back.bin")); !bytes.Equal(got, big) {
		t.Fatalf("1 MiB through the proxy both ways: %d bytes back", len(got))
	}
	// 1 MiB down from files.
	h3test.RunNgtcp2(t, nil, bin, addr, []string{"-q", "--download=" + dl}, base+"/www/big.bin")
	if got, _ := os.ReadFile(filepath.Join(dl, "big.bin")); !bytes.Equal(got, big) {
		t.Fatalf("1 MiB file: %d bytes", len(got))
	}
	// 100 requests at once on one connection.
	out = h3test.RunNgtcp2(t, nil, bin, addr, []string{"-n", "100"}, base+"/")
	if st := h3test.Ngtcp2Status.FindAllStringSubmatch(out, -1); len(st) != 100 {
		t.Fatalf("%d answers of 100", len(st))
	}
}
