package config

import (
	"errors"
	"strings"
	"testing"
)

// TestHTTP3XDPKeys: an xdp listener takes tls and http3: true together
// (QUIC on its udp_port over AF_XDP), and neither alone; it needs the
// udp_port, refuses a tcp_port (no TLS in the userspace stack) and ACME;
// redirect_to_https never points at it.
func TestHTTP3XDPKeys(t *testing.T) {
	const x = `{interface: v, address: 198.18.0.1, udp_port: 443}`
	const tls = `{certificates: [{cert: a, key: b}]}`
	c, err := Parse([]byte("listeners: [{transport: xdp, http3: true, tls: " + tls + ", xdp: " + x + "}]\n" + routesOnly))
	if err != nil {
		t.Fatal(err)
	}
	if l := c.Listeners[0]; !l.HTTP3 || l.TLS == nil || l.XDP.UDPPort != 443 {
		t.Errorf("listener %+v", l)
	}
	if c.HTTPSListener() != nil {
		t.Error("HTTPSListener is the xdp listener")
	}
	for _, tc := range []struct{ yaml, key, msg string }{
		{"listeners: [{transport: xdp, tls: " + tls + ", xdp: " + x + "}]", "listeners[0].tls", "xdp with http3"},
		{"listeners: [{transport: xdp, http3: true, xdp: " + x + "}]", "listeners[0].http3", "with tls"},
		{"listeners: [{transport: xdp, http3: true, tls: " + tls + ", xdp: {interface: v, address: 198.18.0.1, tcp_port: 443}}]",
			"listeners[0].xdp.udp_port", "needed by http3"},
		{"listeners: [{transport: xdp, http3: true, tls: " + tls + ", xdp: {interface: v, address: 198.18.0.1, tcp_port: 80, udp_port: 443}}]",
			"listeners[0].xdp.tcp_port", "no TLS"},
		{"listeners: [{transport: xdp, http3: true, tls: {acme: {email: a@example.com, domains: [example.com]}}, xdp: " + x + "}]",
			"listeners[0].tls.acme", "not on an xdp listener"},
		{"listeners: [{transport: rdma, address: \"127.0.0.1:1\", http3: true, tls: " + tls + "}]", "listeners[0].http3", "tcp or xdp"},
	} {
		_, err := Parse([]byte(tc.yaml + "\n" + routesOnly))
		found := false
		for _, e := range unjoin(err) {
			var ce *Error
			if errors.As(e, &ce) && ce.Key == tc.key && strings.Contains(ce.Msg, tc.msg) {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: want %s: ...%s..., got %v", tc.yaml, tc.key, tc.msg, err)
		}
	}
}
