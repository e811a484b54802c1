package config

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/simdedge/simdedge/server"
)

// timeouts.tunnel_idle and routes[].proxy.upgrades (issue 21): parsed,
// defaulted, passed on, refused with line and key.
func TestUpgradeKeys(t *testing.T) {
	c, err := Parse([]byte("timeouts: {tunnel_idle: 5m}\nupstreams: [{name: a, targets: ['127.0.0.1:1']}]\n" +
		"routes:\n  - proxy: {upstream: a, upgrades: [WebSocket, my-proto]}\n  - proxy: {upstream: a, upgrades: []}\n  - proxy: {upstream: a}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if o := c.ServerOptions(); o.Timeouts.TunnelIdle != 5*time.Minute {
		t.Errorf("tunnel_idle %v", o.Timeouts.TunnelIdle)
	}
	if got := c.Routes[0].Proxy.Upgrades; !slices.Equal(got, []string{"websocket", "my-proto"}) {
		t.Errorf("upgrades %q", got)
	}
	if got := c.Routes[1].Proxy.Upgrades; got == nil || len(got) != 0 {
		t.Errorf("upgrades: [] gave %#v, want empty and non-nil (none allowed)", got)
	}
	if got := c.Routes[2].Proxy.Upgrades; got != nil {
		t.Errorf("no upgrades key gave %#v, want nil (the default)", got)
	}

	c, err = Parse([]byte("routes: [{echo: {}}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	e := c.WithDefaults()
	if time.Duration(e.Timeouts.TunnelIdle) != server.DefaultTunnelIdleTimeout {
		t.Errorf("default tunnel_idle %v", e.Timeouts.TunnelIdle)
	}
	out, err := e.YAML()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "tunnel_idle: 1h0m0s") {
		t.Errorf("effective config lacks tunnel_idle:\n%s", out)
	}
	c, err = Parse([]byte("upstreams: [{name: a, targets: ['127.0.0.1:1']}]\nroutes: [{proxy: {upstream: a}}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	out, err = c.WithDefaults().YAML()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "upgrades: [websocket]") || c.Routes[0].Proxy.Upgrades != nil {
		t.Errorf("effective config lacks the default upgrades (or WithDefaults changed c):\n%s", out)
	}

	for _, tc := range []struct{ yaml, key string }{
		{"timeouts:\n  tunnel_idle: 0s\nroutes: [{echo: {}}]\n", "line 2: timeouts.tunnel_idle"},
		{"upstreams: [{name: a, targets: ['127.0.0.1:1']}]\nroutes:\n  - proxy:\n      upstream: a\n      upgrades: [\"web socket\"]\n", "line 5: routes[0].proxy.upgrades[0]"},
		{"upstreams: [{name: a, targets: ['127.0.0.1:1']}]\nroutes:\n  - proxy:\n      upstream: a\n      upgrades: websocket\n", "line 5: routes[0].proxy.upgrades"},
	} {
		_, err := Parse([]byte(tc.yaml))
		if err == nil || !strings.Contains(err.Error(), tc.key) {
			t.Errorf("%q: error %v, want one naming %s", tc.yaml, err, tc.key)
		}
	}
}
