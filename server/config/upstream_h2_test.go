package config

import (
	"strings"
	"testing"
)

// h2c:// and h2:// targets (issue 21): accepted and built; mixing them with
// other targets, or h2c:// with a tls block, is refused with line and key.
func TestUpstreamH2Targets(t *testing.T) {
	for _, y := range []string{
		"upstreams: [{name: g, targets: ['h2c://127.0.0.1:50051', 'H2C://127.0.0.1:50052']}]\nroutes: [{proxy: {upstream: g}}]\n",
		"upstreams: [{name: g, targets: ['h2://127.0.0.1:443']}]\nroutes: [{proxy: {upstream: g}}]\n",
	} {
		c, err := Parse([]byte(y))
		if err != nil {
			t.Fatalf("%q: %v", y, err)
		}
		if !c.Upstreams[0].IsHTTP2() {
			t.Errorf("%q: not HTTP/2", y)
		}
		s, err := c.Build(BuildOptions{})
		if err != nil {
			t.Fatalf("%q: build: %v", y, err)
		}
		s.Close()
	}
	for _, tc := range []struct{ yaml, want string }{
		{"upstreams:\n  - name: g\n    targets: ['h2c://127.0.0.1:1', '127.0.0.1:2']\nroutes: [{proxy: {upstream: g}}]\n",
			"line 3: upstreams[0].targets: mixes h2:// or h2c:// targets with others"},
		{"upstreams:\n  - name: g\n    targets: ['h2c://127.0.0.1:1']\n    tls: {server_name: x}\nroutes: [{proxy: {upstream: g}}]\n",
			"line 4: upstreams[0].tls"},
	} {
		_, err := Parse([]byte(tc.yaml))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.yaml, err, tc.want)
		}
	}
}
