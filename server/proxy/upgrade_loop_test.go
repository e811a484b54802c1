//go:build linux

package proxy

import (
	"bufio"
	"io"
	"net/http"
	"testing"

	"github.com/simdedge/simdedge/internal/testenv"
	"github.com/simdedge/simdedge/internal/testnet"
	"github.com/simdedge/simdedge/server"
)

// TestLoopProxyIgnoredUpgrade: upgrades the proxy ignores (h2c alone, as
// curl --http2 sends on every plain request, and HTTP/1.0) stay on the
// loop's own proxy, forwarded without the field, instead of handing the
// connection to goroutines.
func TestLoopProxyIgnoredUpgrade(t *testing.T) {
	needLoopProxyRun(t)
	testenv.CheckGoroutines(t)
	b := startTunnelBackend(t)
	addr, up, _ := startLoopProxy(t, UpstreamOptions{Targets: []string{b.addr}}, server.Options{})
	c := testnet.Dial(t, addr, testTimeout)
	br := bufio.NewReader(c)
	for _, req := range []string{
		"GET /x HTTP/1.1\r\nHost: x\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQAAP__\r\n\r\n",
		"GET /x HTTP/1.0\r\nHost: x\r\nConnection: upgrade, keep-alive\r\nUpgrade: websocket\r\n\r\n",
	} {
		io.WriteString(c, req)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 400 || string(body) != "no upgrade" {
			t.Fatalf("got %d %q, want the backend's answer to a plain request", resp.StatusCode, body)
		}
	}
	if p := pooledOnGoroutines(up); p != 0 {
		t.Errorf("%d connections pooled on goroutines: the ignored upgrades were handed off", p)
	}
}
