package config

import (
	"strings"
	"testing"
)

func TestACMEConfig(t *testing.T) {
	c, err := Parse([]byte(`listeners:
  - address: "127.0.0.1:8443"
    tls:
      acme: {email: ops@example.com, directory: "https://acme.example/dir", domains: [a.example, b.example], storage: /tmp/acme}
  - address: "127.0.0.1:8080"
    redirect_to_https: true
` + routesOnly))
	if err != nil {
		t.Fatal(err)
	}
	l := c.EffectiveListeners()[0]
	a := l.TLS.ACME
	if a == nil || a.Email != "ops@example.com" || a.Storage != "/tmp/acme" || len(a.Domains) != 2 {
		t.Fatalf("acme %+v", a)
	}
	if got := a.HTTPChallengeAddress(); got != "127.0.0.1:8080" {
		t.Errorf("http-01 address %q, want the redirect listener's", got)
	}
	if !a.Allows(ChallengeHTTP01) || !a.Allows(ChallengeTLSALPN01) {
		t.Error("both challenges should be allowed by default")
	}
	if o := l.TLS.Options(); len(o.Certificates) != 0 || strings.Join(o.ManagedNames, ",") != "a.example,b.example" {
		t.Errorf("options %+v", o)
	}
	out, err := c.WithDefaults().YAML()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"challenges: [tls-alpn-01, http-01]", "domains: [a.example, b.example]", "directory: https://acme.example/dir"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("effective config lacks %q:\n%s", want, out)
		}
	}
	// Defaults: Let's Encrypt, /var/lib/simdedge/acme; no redirect
	// listener, no http-01 address.
	c, err = Parse([]byte("listeners:\n  - address: \"127.0.0.1:0\"\n    tls: {acme: {domains: [a.example], challenges: [tls-alpn-01]}}\n" + routesOnly))
	if err != nil {
		t.Fatal(err)
	}
	a = c.EffectiveListeners()[0].TLS.ACME
	if a.Directory != DefaultACMEDirectory || a.Storage != DefaultACMEStorage || a.HTTPChallengeAddress() != "" || a.Allows(ChallengeHTTP01) {
		t.Errorf("defaults %+v", a)
	}
	if !a.Equal(c.Listeners[0].TLS.ACME) || a.Equal(nil) || a.Equal(&ACME{Domains: []string{"b.example"}}) {
		t.Error("Equal compares the effective blocks")
	}
}

func TestACMEConfigErrors(t *testing.T) {
	const pre = "listeners:\n  - address: \"127.0.0.1:0\"\n    tls: {acme: "
	for _, tc := range []struct{ acme, key string }{
		{"{}", "listeners[0].tls.acme.domains"},
		{"{domains: []}", "listeners[0].tls.acme.domains"},
		{"{domains: [\"*.a.example\"]}", "listeners[0].tls.acme.domains[0]"},
		{"{domains: [localhost]}", "listeners[0].tls.acme.domains[0]"},
		{"{domains: [127.0.0.1]}", "listeners[0].tls.acme.domains[0]"},
		{"{domains: [\"a..example\"]}", "listeners[0].tls.acme.domains[0]"},
		{"{domains: [a.example], email: ops}", "listeners[0].tls.acme.email"},
		{"{domains: [a.example], email: \"Ops <ops@example.com>\"}", "listeners[0].tls.acme.email"},
		{"{domains: [a.example], directory: \"http://acme.example/dir\"}", "listeners[0].tls.acme.directory"},
		{"{domains: [a.example], directory: \"acme.example\"}", "listeners[0].tls.acme.directory"},
		{"{domains: [a.example], challenges: [dns-01]}", "listeners[0].tls.acme.challenges[0]"},
		{"{domains: [a.example], eab: x}", "listeners[0].tls.acme.eab"},
		{"{domains: [a.example], challenges: [http-01]}", "listeners[0].tls.acme.challenges"},
	} {
		_, err := Parse([]byte(pre + tc.acme + "}\n" + routesOnly))
		if err == nil || !strings.Contains(err.Error(), "line ") || !strings.Contains(err.Error(), tc.key+":") {
			t.Errorf("%s: error %v, want one with a line and %s", tc.acme, err, tc.key)
		}
	}
}
