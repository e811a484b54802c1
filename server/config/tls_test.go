package config

import (
	"strings"
	"testing"
	"time"

	"github.com/simdedge/simdedge/server/edgetls"
)

func TestListenerTLS(t *testing.T) {
	c, err := Parse([]byte(`listeners:
  - address: "127.0.0.1:8443"
    tls:
      certificates:
        - {cert: site.pem, key: site.key}
        - {cert: other.pem, key: other.key}
      min_version: "1.3"
      client_auth: {ca: clients.pem, mode: require}
  - address: "127.0.0.1:8080"
    redirect_to_https: true
` + routesOnly))
	if err != nil {
		t.Fatal(err)
	}
	if l := c.HTTPSListener(); l == nil || l.Address != "127.0.0.1:8443" {
		t.Fatalf("https listener %+v", l)
	}
	o := c.Listeners[0].TLS.Options()
	if len(o.Certificates) != 2 || o.Certificates[1].Key != "other.key" || o.MinVersion != 0x0304 || o.ClientCA != "clients.pem" || o.ClientAuth != edgetls.ClientAuthRequire {
		t.Errorf("options %+v", o)
	}
	if !c.Listeners[1].RedirectToHTTPS {
		t.Error("redirect_to_https lost")
	}
	out, err := c.WithDefaults().YAML()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"min_version: \"1.3\"", "alpn: [h2, http/1.1]", "http2: true", "handshake_timeout: 10s", "ticket_rotation: 1h0m0s", "mode: require", "redirect_to_https: true"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("effective config lacks %q:\n%s", want, out)
		}
	}
	// Defaults: 1.2, verify_if_given when a CA is given.
	c, err = Parse([]byte("listeners:\n  - address: \"127.0.0.1:0\"\n    tls: {certificates: [{cert: a, key: b}], client_auth: {ca: c}}\n" + routesOnly))
	if err != nil {
		t.Fatal(err)
	}
	e := c.EffectiveListeners()[0].TLS
	if e.MinVersion != "1.2" || e.ClientAuth.Mode != string(edgetls.ClientAuthVerifyIfGiven) || time.Duration(e.HandshakeTimeout) != edgetls.DefaultHandshakeTimeout {
		t.Errorf("defaults %+v", e)
	}
	if c.Listeners[0].TLS.MinVersion != "" {
		t.Error("defaults leaked into the parsed config")
	}
}

func TestListenerTLSErrors(t *testing.T) {
	for _, tc := range []struct{ yaml, key string }{
		{"listeners:\n  - address: \"127.0.0.1:0\"\n    tls: {}\n", "listeners[0].tls.certificates"},
		{"listeners:\n  - address: \"127.0.0.1:0\"\n    tls: {certificates: [{cert: a}]}\n", "listeners[0].tls.certificates[0]"},
		{"listeners:\n  - address: \"127.0.0.1:0\"\n    tls: {certificates: [{cert: a, key: b}], min_version: \"1.1\"}\n", "listeners[0].tls.min_version"},
		{"listeners:\n  - address: \"127.0.0.1:0\"\n    tls: {certificates: [{cert: a, key: b}], alpn: [\"\"]}\n", "listeners[0].tls.alpn[0]"},
		{"listeners:\n  - address: \"127.0.0.1:0\"\n    tls: {certificates: [{cert: a, key: b}], client_auth: {mode: require}}\n", "listeners[0].tls.client_auth.ca"},
		{"listeners:\n  - address: \"127.0.0.1:0\"\n    tls: {certificates: [{cert: a, key: b}], client_auth: {ca: c, mode: maybe}}\n", "listeners[0].tls.client_auth.mode"},
		{"listeners:\n  - address: \"127.0.0.1:0\"\n    tls: {certificates: [{cert: a, key: b}], ciphers: [x]}\n", "listeners[0].tls.ciphers"},
		{"listeners:\n  - address: \"127.0.0.1:0\"\n    redirect_to_https: true\n", "listeners[0].redirect_to_https"},
		{"listeners:\n  - address: \"127.0.0.1:0\"\n    redirect_to_https: yes please\n", "listeners[0].redirect_to_https"},
		{"listeners:\n  - address: \"127.0.0.1:0\"\n    redirect_to_https: true\n    tls: {certificates: [{cert: a, key: b}]}\n", "listeners[0].redirect_to_https"},
		{"listeners:\n  - transport: rdma\n    address: \"127.0.0.1:0\"\n    tls: {certificates: [{cert: a, key: b}]}\n", "listeners[0].tls"},
	} {
		_, err := Parse([]byte(tc.yaml + routesOnly))
		if err == nil || !strings.Contains(err.Error(), "line ") || !strings.Contains(err.Error(), tc.key+":") {
			t.Errorf("%q: error %v, want one with a line and %s", tc.yaml, err, tc.key)
		}
	}
}
