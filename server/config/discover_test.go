package config

import (
	"strings"
	"testing"
)

// resolve and dns+srv:// targets (issue 32): accepted with their defaults,
// refused where they cannot apply, and built without a lookup under
// NoDiscovery (simdedge check).
func TestResolveKeys(t *testing.T) {
	for _, y := range []string{
		"upstreams: [{name: a, targets: ['api.internal:8080'], resolve: {servers: ['127.0.0.1:53'], interval: 3s, respect_ttl: false, family: ipv4}}]\nroutes: [{proxy: {upstream: a}}]\n",
		"upstreams: [{name: a, targets: ['dns+srv://_http._tcp.api.internal', '10.0.0.1:80']}]\nroutes: [{proxy: {upstream: a}}]\n",
		"upstreams: [{name: a, targets: ['https://api.internal:443'], tls: {server_name: api.internal}, resolve: {}}]\nroutes: [{proxy: {upstream: a}}]\n",
	} {
		c, err := Parse([]byte(y))
		if err != nil {
			t.Fatalf("%q: %v", y, err)
		}
		u := c.WithDefaults().Upstreams[0]
		if u.Resolve == nil || u.Resolve.Interval == 0 || u.Resolve.RespectTTL == nil || u.Resolve.Family == "" {
			t.Errorf("%q: resolve defaults not filled: %+v", y, u.Resolve)
		}
		s, err := c.Build(BuildOptions{NoDiscovery: true})
		if err != nil {
			t.Fatalf("%q: build: %v", y, err)
		}
		if len(s.discovery) != 0 {
			t.Errorf("%q: NoDiscovery built a watcher", y)
		}
		s.Close()
	}
	for _, tc := range []struct{ yaml, want string }{
		{"upstreams: [{name: a, targets: ['dns+srv://bad name']}]\nroutes: [{proxy: {upstream: a}}]\n", "upstreams[0].targets[0]: must be \"dns+srv://NAME\""},
		{"upstreams: [{name: a, targets: ['a.b:1'], resolve: {servers: ['nameserver']}}]\nroutes: [{proxy: {upstream: a}}]\n", "upstreams[0].resolve.servers[0]"},
		{"upstreams: [{name: a, targets: ['a.b:1'], resolve: {family: ipv5}}]\nroutes: [{proxy: {upstream: a}}]\n", "upstreams[0].resolve.family: must be any, ipv4 or ipv6"},
		{"upstreams: [{name: a, targets: ['https://a.b:443'], resolve: {}}]\nroutes: [{proxy: {upstream: a}}]\n", "upstreams[0].tls.server_name: needed with resolve"},
		{"upstreams: [{name: a, targets: ['h2c://a.b:1'], resolve: {}}]\nroutes: [{proxy: {upstream: a}}]\n", "upstreams[0].resolve: not for h2c://"},
	} {
		_, err := Parse([]byte(tc.yaml))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.yaml, err, tc.want)
		}
	}
}

// A name that does not resolve fails the build at the resolve key (the
// DNS server is a closed loopback port: no answer within the timeout).
func TestResolveFailureFailsBuild(t *testing.T) {
	c, err := Parse([]byte("upstreams: [{name: a, targets: ['api.invalid:80'], resolve: {servers: ['127.0.0.1:1'], timeout: 200ms}}]\nroutes: [{proxy: {upstream: a}}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Build(BuildOptions{}); err == nil || !strings.Contains(err.Error(), "upstreams[0].resolve: cannot resolve") {
		t.Fatalf("build error %v, want cannot resolve", err)
	}
}
