package config

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/simdedge/simdedge/internal/testcert"
)

// TestUpstreamTLSErrors: bad upstream tls and route hsts values are
// reported at their line and key.
func TestUpstreamTLSErrors(t *testing.T) {
	const head = "upstreams:\n  - name: a\n"
	const tail = "routes: [{echo: {}}]\n"
	for _, tc := range []struct {
		yaml string
		line int
		key  string
	}{
		{"    targets: [\"https://127.0.0.1:1\", \"127.0.0.1:2\"]\n", 3, "upstreams[0].targets"},
		{"    targets: [\"http://127.0.0.1:1\"]\n    tls: {ca: x.pem}\n", 4, "upstreams[0].tls"},
		{"    targets: [\"127.0.0.1:1\"]\n    tls: {client_cert: {cert: c.pem}}\n", 4, "upstreams[0].tls.client_cert"},
		{"    targets: [\"127.0.0.1:1\"]\n    tls: {insecure_skip_verify: maybe}\n", 4, "upstreams[0].tls.insecure_skip_verify"},
		{"    targets: [\"127.0.0.1:1\"]\n    tls: {server_name: \"a/b\"}\n", 4, "upstreams[0].tls.server_name"},
		{"    targets: [\"127.0.0.1:1\"]\n    tls: {sni: x}\n", 4, "upstreams[0].tls.sni"},
	} {
		_, err := Parse([]byte(head + tc.yaml + tail))
		var ce *Error
		if !errors.As(err, &ce) {
			t.Errorf("%q: error %v, want *Error", tc.yaml, err)
			continue
		}
		if ce.Line != tc.line || ce.Key != tc.key {
			t.Errorf("%q: line %d key %q, want line %d key %q (%v)", tc.yaml, ce.Line, ce.Key, tc.line, tc.key, err)
		}
	}
	for _, tc := range []struct {
		yaml string
		line int
		key  string
	}{
		{"routes:\n  - echo: {}\n    hsts: {include_subdomains: true}\n", 3, "routes[0].hsts.max_age"},
		{"routes:\n  - echo: {}\n    hsts:\n      max_age: -1\n", 4, "routes[0].hsts.max_age"},
		{"routes:\n  - echo: {}\n    hsts: {max_age: 300, preload: true}\n", 3, "routes[0].hsts.preload"},
	} {
		_, err := Parse([]byte(tc.yaml))
		var ce *Error
		if !errors.As(err, &ce) || ce.Line != tc.line || ce.Key != tc.key {
			t.Errorf("%q: %v, want line %d key %q", tc.yaml, err, tc.line, tc.key)
		}
	}
}

// TestUpstreamTLSBuild: Build loads the files (a CA that is not PEM and a
// mismatched client pair are errors at the tls key), and
// insecure_skip_verify logs a warning at every build (start and reload).
func TestUpstreamTLSBuild(t *testing.T) {
	ca := testcert.NewCA(t, "backend CA")
	a := ca.Client(t, "a", "a.internal")
	b := ca.Client(t, "b", "b.internal")
	junk := filepath.Join(t.TempDir(), "junk.pem")
	if err := os.WriteFile(junk, []byte("not pem"), 0o600); err != nil {
		t.Fatal(err)
	}
	up := func(tls string) string {
		return "upstreams:\n  - name: s\n    targets: [\"https://127.0.0.1:9443\"]\n    tls: " + tls + "\nroutes: [{proxy: {upstream: s}}]\n"
	}
	for _, tc := range []struct{ name, tls, want string }{
		{"ca not PEM", "{ca: " + junk + "}", "no PEM certificate"},
		{"ca missing", "{ca: " + junk + ".none}", "unreadable"},
		{"pair mismatch", "{client_cert: {cert: " + a.CertFile + ", key: " + b.KeyFile + "}}", "private key does not match"},
	} {
		c, err := Parse([]byte(up(tc.tls)))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		_, err = c.Build(BuildOptions{})
		var ce *Error
		if !errors.As(err, &ce) || ce.Key != "upstreams[0].tls" || ce.Line != 4 || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q at line 4 key upstreams[0].tls", tc.name, err, tc.want)
		}
	}
	c, err := Parse([]byte(up("{ca: " + ca.File + ", server_name: backend.internal, client_cert: {cert: " + a.CertFile + ", key: " + a.KeyFile + "}, insecure_skip_verify: true}")))
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	first, err := c.Build(BuildOptions{Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	first.Start(nil)
	second, err := c.Build(BuildOptions{Logger: log, Previous: first})
	if err != nil {
		t.Fatal(err)
	}
	second.Start(first)
	first.Close()
	second.Close()
	if n := strings.Count(logs.String(), "level=WARN msg=\"upstream tls: insecure_skip_verify"); n != 2 {
		t.Fatalf("%d warnings for two builds, want 2: %s", n, logs.String())
	}
	if !c.Upstreams[0].IsTLS() {
		t.Fatal("https target: not TLS")
	}
}

// TestWebSchemeTargets: http:// targets are plain stream targets.
func TestWebSchemeTargets(t *testing.T) {
	c, err := Parse([]byte("upstreams:\n  - name: p\n    targets: [\"http://127.0.0.1:9001\", \"HTTP://127.0.0.1:9002\"]\nroutes: [{proxy: {upstream: p}}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.Build(BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if c.Upstreams[0].IsTLS() {
		t.Fatal("http:// targets: TLS")
	}
	got := s.Upstreams["p"].Pool().Options().Targets
	if len(got) != 2 || got[0].Address != "127.0.0.1:9001" || got[1].Address != "127.0.0.1:9002" {
		t.Fatalf("targets %+v", got)
	}
}
