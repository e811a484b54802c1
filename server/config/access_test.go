package config

import (
	"strings"
	"testing"
)

const accessExample = `trusted_proxies: ["10.0.0.0/8", "192.0.2.1"]
upstreams:
  - {name: api, targets: ["127.0.0.1:9001"]}
routes:
  - match: {path_prefix: /api/}
    allow: ["192.0.2.0/24"]
    deny: ["192.0.2.66/32"]
    rate_limit: {key: client_ip, rate: 100, burst: 200}
    basic_auth: {realm: edge, users: {alice: "$2a$10$utS24a/0RWW..DRCeWjd9OUkW8WhLsC7MFl04n9UKUmqqCq4ZE8lC"}}
    forward_auth: {url: "http://127.0.0.1:9100/auth", copy_headers: [X-User]}
    proxy: {upstream: api}
  - match: {path_prefix: /k/}
    rate_limit: {key: "header:X-Api-Key", rate: 0.5}
    respond: {status: 200}
`

// TestParseAccess: the gatekeeping keys parse, fill their defaults and
// build; trusted_proxies reaches the server options.
func TestParseAccess(t *testing.T) {
	c, err := Parse([]byte(accessExample))
	if err != nil {
		t.Fatal(err)
	}
	r := c.Routes[0]
	if len(r.Allow) != 1 || len(r.Deny) != 1 || r.RateLimit.Rate != 100 || r.RateLimit.Burst != 200 ||
		r.BasicAuth.Realm != "edge" || len(r.BasicAuth.Users) != 1 || r.ForwardAuth.CopyHeaders[0] != "X-User" {
		t.Fatalf("parsed %+v", r)
	}
	e := c.WithDefaults()
	if rl := e.Routes[1].RateLimit; rl.Burst != 1 || rl.Key != "header:X-Api-Key" || rl.MaxKeys == 0 {
		t.Errorf("defaults %+v", rl)
	}
	if e.Routes[0].ForwardAuth.Timeout == 0 {
		t.Error("forward_auth timeout default missing")
	}
	o := c.ServerOptions()
	if o.TrustedProxies.Empty() || len(o.TrustedProxies.List()) != 2 {
		t.Errorf("trusted proxies %v", o.TrustedProxies.List())
	}
	s, err := c.Build(BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	y, _ := e.YAML()
	for _, k := range []string{"trusted_proxies", "rate_limit", "basic_auth", "forward_auth", "max_keys"} {
		if !strings.Contains(string(y), k) {
			t.Errorf("effective config lacks %s", k)
		}
	}
}

func TestAccessErrors(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"trusted_proxies: [\"10.0.0.0/33\"]\nroutes: [{respond: {status: 200}}]\n", "line 1: trusted_proxies[0]: must be an IP address or CIDR prefix"},
		{"routes:\n  - respond: {status: 200}\n    allow: [nope]\n", "line 3: routes[0].allow[0]: must be an IP address or CIDR prefix"},
		{"routes:\n  - respond: {status: 200}\n    rate_limit: {rate: 0}\n", "routes[0].rate_limit.rate: must be a positive"},
		{"routes:\n  - respond: {status: 200}\n    rate_limit: {burst: 3}\n", "routes[0].rate_limit.rate: missing"},
		{"routes:\n  - respond: {status: 200}\n    rate_limit: {rate: 1, key: cookie}\n", `routes[0].rate_limit.key: must be "client_ip" or "header:NAME"`},
		{"routes:\n  - respond: {status: 200}\n    basic_auth: {users: {alice: hunter2}}\n", "line 3: routes[0].basic_auth.users.alice: must be a bcrypt hash"},
		{"routes:\n  - respond: {status: 200}\n    basic_auth: {realm: x}\n", "routes[0].basic_auth.users: needs at least one user"},
		{"routes:\n  - respond: {status: 200}\n    forward_auth: {url: \"ftp://x\"}\n", "routes[0].forward_auth.url: must be an absolute http"},
		{"routes:\n  - respond: {status: 200}\n    forward_auth: {url: \"http://a/\", copy_headers: [\"a b\"]}\n", "routes[0].forward_auth.copy_headers[0]: must be a header field name"},
	} {
		_, err := Parse([]byte(tc.yaml))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.yaml, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "hunter2") {
			t.Errorf("error echoes a password: %v", err)
		}
	}
}

func TestListenerAccessKeys(t *testing.T) {
	c, err := Parse([]byte("trusted_proxies: [127.0.0.1]\nlisteners:\n  - {address: \"127.0.0.1:0\", proxy_protocol: true, allow: [10.0.0.0/8], deny: [10.0.0.1]}\nroutes: [{respond: {status: 200}}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	p := c.Listeners[0].Policy()
	if !p.ProxyProtocol || !p.Rules.Active() {
		t.Fatalf("policy %+v", p)
	}
	for _, tc := range []struct{ yaml, want string }{
		{"listeners:\n  - {address: \"127.0.0.1:0\", deny: [\"x\"]}\nroutes: [{respond: {status: 200}}]\n", "line 2: listeners[0].deny[0]: must be an IP address or CIDR prefix"},
		{"listeners:\n  - {address: \"127.0.0.1:0\", proxy_protocol: true, redirect_to_https: true}\nroutes: [{respond: {status: 200}}]\n", "listeners[0].proxy_protocol: not supported with redirect_to_https"},
		{"listeners:\n  - {transport: rdma, address: \"127.0.0.1:1\", proxy_protocol: true}\nroutes: [{respond: {status: 200}}]\n", "proxy_protocol, allow and deny are for transport: tcp"},
	} {
		if _, err := Parse([]byte(tc.yaml)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.yaml, err, tc.want)
		}
	}
}

func TestSendProxyProtocolKey(t *testing.T) {
	c, err := Parse([]byte("upstreams:\n  - {name: a, targets: [\"127.0.0.1:9\"], send_proxy_protocol: v2}\nroutes: [{proxy: {upstream: a}}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Upstreams[0].sendProxyVersion() != 2 {
		t.Errorf("version %d", c.Upstreams[0].sendProxyVersion())
	}
	for _, tc := range []struct{ yaml, want string }{
		{"upstreams:\n  - {name: a, targets: [\"127.0.0.1:9\"], send_proxy_protocol: v3}\nroutes: [{proxy: {upstream: a}}]\n", `line 2: upstreams[0].send_proxy_protocol: must be "v1" or "v2"`},
		{"upstreams:\n  - {name: a, targets: [\"https://127.0.0.1:9\"], send_proxy_protocol: v1}\nroutes: [{proxy: {upstream: a}}]\n", "upstreams[0].send_proxy_protocol: only for plain host:port targets"},
	} {
		if _, err := Parse([]byte(tc.yaml)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.yaml, err, tc.want)
		}
	}
}
