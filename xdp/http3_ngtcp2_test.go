package xdp

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

	"github.com/simdedge/simdedge/internal/h3test"
	"github.com/simdedge/simdedge/internal/testenv"
	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/config"
	"github.com/simdedge/simdedge/xdp/xdptest"
)

// ngtcp2Routes are the routes ngtcp2's client is served from: a proxy
// route to back, echo, files from dir, and respond.
func ngtcp2Routes(t *testing.T, back, dir string) *config.Config {
	t.Helper()
	c, err := config.Parse([]byte(fmt.Sprintf(`limits:
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
`, back, dir)))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestHTTP3Ngtcp2OverXDP: ngtcp2's HTTP/3 client (another QUIC stack, on
// GnuTLS), run in the client namespace, against the routes of a
// configuration served on the AF_XDP PacketConn: respond and proxy, 1 MiB
// up to echo and through the proxy both ways, 1 MiB down from files, and
// 100 requests at once on one connection. It is cmd/simdedge's
// TestNgtcp2Client on the AF_XDP datagram path.
func TestHTTP3Ngtcp2OverXDP(t *testing.T) {
	bin := h3test.Ngtcp2(t)
	testenv.CheckGoroutines(t)
	v := xdptest.NewVeth(t)
	back := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if r.Method == "POST" {
			w.Write(b) // the body back, whole
			return
		}
		io.WriteString(w, "proxied "+r.Header.Get("Via"))
	}))
	t.Cleanup(back.Close)
	dir := t.TempDir()
	big := make([]byte, h3BigSize)
	rand.Read(big)
	os.MkdirAll(filepath.Join(dir, "www"), 0o755)
	os.WriteFile(filepath.Join(dir, "www", "big.bin"), big, 0o644)
	up := filepath.Join(dir, "up.bin")
	os.WriteFile(up, big, 0o644)

	cfg := ngtcp2Routes(t, strings.TrimPrefix(back.URL, "http://"), dir)
	snap, err := cfg.Build(config.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	snap.Start(nil)
	t.Cleanup(snap.Close)
	so := cfg.ServerOptions()
	so.Handler = snap.Table
	e := serveHTTP3(t, v, Native, nil, so, server.HTTP3Options{})

	addr := e.addr.String()
	base := fmt.Sprintf("https://a.example:%d", testUDPPort)
	inClient := []string{"ip", "netns", "exec", v.ClientNS}
	before, _ := e.l.Stats()
	dl := filepath.Join(dir, "dl")
	os.Mkdir(dl, 0o755)
	out := h3test.RunNgtcp2(t, inClient, bin, addr, []string{"--download=" + dl}, base+"/r", base+"/p/x")
	st := h3test.Ngtcp2Status.FindAllStringSubmatch(out, -1)
	r, _ := os.ReadFile(filepath.Join(dl, "r"))
	x, _ := os.ReadFile(filepath.Join(dl, "x"))
	if len(st) != 2 || st[0][1] != "200" || st[1][1] != "200" || string(r) != "hi" || string(x) != "proxied 3 simdedge" {
		t.Fatalf("respond and proxy: %v %q %q\n%s", st, r, x, h3test.Tail(out, 3000))
	}
	// 1 MiB up: echo counts it; the proxy sends it back whole.
	h3test.RunNgtcp2(t, inClient, bin, addr, []string{"-q", "-m", "POST", "-d", up, "--download=" + dl}, base+"/echo")
	if b, _ := os.ReadFile(filepath.Join(dl, "echo")); !bytes.Contains(b, []byte(`"body_len":1048576`)) || !bytes.Contains(b, []byte(`"version":"HTTP/3"`)) {
		t.Fatalf("1 MiB to echo: %s", b)
	}
	h3test.RunNgtcp2(t, inClient, bin, addr, []string{"-q", "-m", "POST", "-d", up, "--download=" + dl}, base+"/p/back.bin")
	if got, _ := os.ReadFile(filepath.Join(dl, "back.bin")); !bytes.Equal(got, big) {
		t.Fatalf("1 MiB through the proxy both ways: %d bytes back", len(got))
	}
	// 1 MiB down from files.
	h3test.RunNgtcp2(t, inClient, bin, addr, []string{"-q", "--download=" + dl}, base+"/www/big.bin")
	if got, _ := os.ReadFile(filepath.Join(dl, "big.bin")); !bytes.Equal(got, big) {
		t.Fatalf("1 MiB file: %d bytes", len(got))
	}
	// 100 requests at once on one connection.
	out = h3test.RunNgtcp2(t, inClient, bin, addr, []string{"-n", "100"}, base+"/")
	if st := h3test.Ngtcp2Status.FindAllStringSubmatch(out, -1); len(st) != 100 {
		t.Fatalf("%d answers of 100\n%s", len(st), h3test.Tail(out, 3000))
	}
	// It all went through the AF_XDP socket: 1 MiB up twice and down
	// twice is over 1,400 full datagrams each way.
	after, err := e.l.Stats()
	if got, sent := after.Datagrams-before.Datagrams, after.Sent-before.Sent; err != nil || got < 1400 || sent < 1400 {
		t.Errorf("%d datagrams received and %d frames sent over AF_XDP (%v), want 1,400 each way", got, sent, err)
	}
}
