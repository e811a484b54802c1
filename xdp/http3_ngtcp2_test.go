package xdp

import (
	"fmt"
	"testing"

	"github.com/simdedge/simdedge/internal/h3test"
	"github.com/simdedge/simdedge/internal/testenv"
	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/config"
	"github.com/simdedge/simdedge/xdp/xdptest"
)

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
	f := h3test.NewNgtcp2Fixture(t)
	cfg, err := config.Parse([]byte(f.Routes()))
	if err != nil {
		t.Fatal(err)
	}
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
	f.Run(t, inClient, bin, addr, base)
	// It all went through the AF_XDP socket: 1 MiB up twice and down
	// twice is over 1,400 full datagrams each way.
	after, err := e.l.Stats()
	if got, sent := after.Datagrams-before.Datagrams, after.Sent-before.Sent; err != nil || got < 1400 || sent < 1400 {
		t.Errorf("%d datagrams received and %d frames sent over AF_XDP (%v), want 1,400 each way", got, sent, err)
	}
}
