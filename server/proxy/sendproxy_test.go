package proxy

import (
	"context"
	"net/netip"
	"testing"

	"github.com/simdedge/simdedge/internal/testenv"
	"github.com/simdedge/simdedge/internal/testnet"
	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/access"
	"github.com/simdedge/simdedge/server/proxyproto"
)

// TestSendProxyProtocol: an upstream with SendProxyProtocol gets a v1 or
// v2 header naming the client before each request (a simdedge origin with
// a PROXY listener reads it back), on every engine (the loop hands such
// requests off); health checks send a header that names no client.
func TestSendProxyProtocol(t *testing.T) {
	testenv.CheckGoroutines(t)
	origin := server.New(server.Options{
		Handler: server.HandlerFunc(func(w *server.ResponseWriter, r *server.Request) {
			w.WriteString("remote=" + string(r.RemoteIP()))
		}),
		TrustedProxies: access.NewPrefixes([]netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}),
	})
	ol := testnet.Listen(t)
	go origin.ServeTCP(server.WithPolicy(ol, server.ListenerPolicy{ProxyProtocol: true}), testEngine)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		origin.Shutdown(ctx)
	})
	for _, v := range []int{1, 2} {
		addr, up := startProxy(t, UpstreamOptions{Targets: []string{ol.Addr().String()}, SendProxyProtocol: v}, server.Options{})
		c := clientFrom(t, "127.0.0.5")
		for i := range 3 {
			if a := gateDo(t, c, "http://"+addr+"/x", nil); a.status != 200 || a.body != "remote=127.0.0.5" {
				t.Errorf("v%d request %d: %d %q", v, i, a.status, a.body)
			}
		}
		_, h, err := proxyproto.Parse(up.probeRequest(up.targets[0]))
		if err != nil || h.Version != v || !h.Local {
			t.Errorf("v%d health check header: %+v %v", v, h, err)
		}
	}
}
