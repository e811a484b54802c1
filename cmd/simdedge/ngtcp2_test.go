package main

import (
	"fmt"
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
	f := h3test.NewNgtcp2Fixture(t)
	ca := testcert.NewCA(t, "ngtcp2 CA")
	leaf := ca.Leaf(t, "a", []string{"a.example"}, time.Time{}, time.Time{})
	file := filepath.Join(t.TempDir(), "c.yaml")
	cfg := fmt.Sprintf(`listeners:
  - address: "127.0.0.1:0"
    tls:
      certificates: [{cert: %q, key: %q}]
    http3: true
`, leaf.CertFile, leaf.KeyFile) + f.Routes()
	if err := os.WriteFile(file, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	addrs := startServeAll(t, "-config", file)
	addr := strings.TrimPrefix(addrs[1], "udp+h3://")
	base := "https://a.example:" + addr[strings.LastIndexByte(addr, ':')+1:]

	f.Run(t, nil, bin, addr, base)
}
