package config

import (
	"strings"
	"testing"

	"github.com/simdedge/simdedge/server/proxy"
)

// TestUntrustedForwarding: the key's values reach the proxy's options,
// drop is the default (and shows in the effective config), anything else
// is refused, and a route's request_headers edit of X-Real-IP or
// Forwarded is refused unless the mode is pass.
func TestUntrustedForwarding(t *testing.T) {
	const routes = "\nroutes: [{respond: {status: 200}}]\n"
	for _, tc := range []struct {
		yaml string
		want proxy.Forwarding
	}{
		{"", proxy.ForwardingDrop},
		{"untrusted_forwarding: drop", proxy.ForwardingDrop},
		{"untrusted_forwarding: overwrite", proxy.ForwardingOverwrite},
		{"untrusted_forwarding: pass", proxy.ForwardingPass},
	} {
		c, err := Parse([]byte(tc.yaml + routes))
		if err != nil {
			t.Fatalf("%q: %v", tc.yaml, err)
		}
		if got := c.forwarding(); got != tc.want {
			t.Errorf("%q: mode %d, want %d", tc.yaml, got, tc.want)
		}
	}
	c, _ := Parse([]byte(routes))
	if y, _ := c.WithDefaults().YAML(); !strings.Contains(string(y), "untrusted_forwarding: drop") {
		t.Errorf("effective config lacks the default:\n%s", y)
	}
	edit := "routes:\n  - respond: {status: 200}\n    request_headers: {set: {x-real-ip: \"{client_ip}\"}}\n"
	for _, tc := range []struct{ yaml, want string }{
		{"untrusted_forwarding: strip" + routes, `line 1: untrusted_forwarding: must be "drop", "overwrite" or "pass"`},
		{edit, "line 3: routes[0].request_headers: X-Real-IP is written by untrusted_forwarding"},
		{"untrusted_forwarding: overwrite\n" + strings.Replace(edit, "set", "add", 1) + "", "routes[0].request_headers: X-Real-IP"},
	} {
		if _, err := Parse([]byte(tc.yaml)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.yaml, err, tc.want)
		}
	}
	if _, err := Parse([]byte("untrusted_forwarding: pass\n" + edit)); err != nil {
		t.Errorf("pass with a request_headers edit: %v", err)
	}
}
