package config

import (
	"strings"
	"testing"
)

func TestAdminConfig(t *testing.T) {
	const routes = "routes:\n  - match: {path: /}\n    respond: {status: 200}\n"
	c, err := Parse([]byte("admin: {address: \"127.0.0.1:9901\", pprof: true}\n" + routes))
	if err != nil {
		t.Fatal(err)
	}
	if !c.Admin.Enabled() || !c.Admin.PProfOn() {
		t.Errorf("admin = %+v", c.Admin)
	}
	// Off by default, and check prints the defaults.
	c, err = Parse([]byte(routes))
	if err != nil {
		t.Fatal(err)
	}
	if c.Admin.Enabled() || c.Admin.PProfOn() {
		t.Error("admin on without admin.address")
	}
	out, err := c.WithDefaults().YAML()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "admin:\n    address: \"\"\n    pprof: false\n    public: false") {
		t.Errorf("effective config lacks the admin defaults:\n%s", out)
	}
	if _, err := Parse([]byte("admin: {address: \"[::1]:9901\"}\n" + routes)); err != nil {
		t.Errorf("IPv6 loopback refused: %v", err)
	}
	if _, err := Parse([]byte("admin: {address: \"0.0.0.0:9901\", public: true}\n" + routes)); err != nil {
		t.Errorf("public address refused with public: true: %v", err)
	}
	for _, tc := range []struct{ in, want string }{
		{"admin: {address: \"0.0.0.0:9901\"}\n", "line 1: admin.address: is not a loopback address"},
		{"admin: {address: \"10.1.2.3:9901\"}\n", "admin.address: is not a loopback address"},
		{"admin: {address: \"9901\"}\n", "admin.address: must be host:port"},
		{"admin: {address: \"example.com:9901\"}\n", "admin.address: host must be an IP address"},
		{"admin:\n  pprof: yes please\n", "line 2: admin.pprof: must be true or false"},
		{"admin: {adress: \"127.0.0.1:1\"}\n", "admin.adress: unknown key"},
		{"admin: 3\n", "admin: must be a mapping"},
	} {
		_, err := Parse([]byte(tc.in + routes))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err %v, want %q", tc.in, err, tc.want)
		}
	}
}
