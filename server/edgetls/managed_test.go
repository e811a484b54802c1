package edgetls

import (
	"crypto/tls"
	"errors"
	"testing"

	"github.com/simdedge/simdedge/internal/testcert"
)

// TestManagedNames: names under ACME are answered by the manager before
// the files, other names by the files as before (the first file stays
// the default), and a TLS-ALPN-01 handshake gets the challenge config.
func TestManagedNames(t *testing.T) {
	c := newCerts(t)
	s, err := New(Options{Certificates: files(c.a, c.b), ManagedNames: []string{"M.example", "b.example"}})
	if err != nil {
		t.Fatal(err)
	}
	managed, err := tls.LoadX509KeyPair(c.wild.CertFile, c.wild.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	get := func(name string, protos ...string) (*tls.Certificate, *tls.Config, error) {
		h := &tls.ClientHelloInfo{ServerName: name, SupportedProtos: protos}
		cfg, err := s.TLSConfig().GetConfigForClient(h)
		if err != nil {
			return nil, nil, err
		}
		cert, err := cfg.GetCertificate(h)
		return cert, cfg, err
	}
	// No manager yet: managed names fall back to the files.
	if cert, _, err := get("m.example"); err != nil || cert.Leaf.SerialNumber.Cmp(c.a.Leaf.SerialNumber) != 0 {
		t.Fatalf("before SetManager: %v, %v", cert, err)
	}
	s.SetManager(func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return &managed, nil })
	for _, tc := range []struct {
		name    string
		managed bool
	}{
		{"m.example", true},
		{"M.EXAMPLE.", true},
		{"b.example", true}, // managed wins over a file naming it
		{"a.example", false},
		{"", false}, // default: the first file
		{"other.example", false},
	} {
		cert, _, err := get(tc.name)
		if err != nil {
			t.Fatal(err)
		}
		if got := cert == &managed; got != tc.managed {
			t.Errorf("%q: managed %v, want %v", tc.name, got, tc.managed)
		}
	}
	// The validation handshake offers acme-tls/1 alone.
	if _, cfg, _ := get("a.example", ACMETLS1); len(cfg.NextProtos) != 1 || cfg.NextProtos[0] != ACMETLS1 {
		t.Errorf("acme-tls/1 handshake config: %v", cfg.NextProtos)
	}
	if _, cfg, _ := get("a.example", ACMETLS1, "http/1.1"); len(cfg.NextProtos) == 1 && cfg.NextProtos[0] == ACMETLS1 {
		t.Error("a client offering more than acme-tls/1 is not a validation")
	}
	// A reload keeps the manager.
	if err := s.Reload(Options{Certificates: files(c.a), ManagedNames: []string{"m.example"}}); err != nil {
		t.Fatal(err)
	}
	if cert, _, _ := get("m.example"); cert != &managed {
		t.Error("manager lost by Reload")
	}
}

// TestManagedOnly: a listener with ACME names and no files loads; before
// its manager is attached a handshake fails with ErrNoCertificate, after
// it every name goes to the manager.
func TestManagedOnly(t *testing.T) {
	if _, err := New(Options{}); !errors.Is(err, ErrNoCertificates) {
		t.Fatalf("no files, no names: %v", err)
	}
	s, err := New(Options{ManagedNames: []string{"m.example"}})
	if err != nil {
		t.Fatal(err)
	}
	h := &tls.ClientHelloInfo{ServerName: "m.example"}
	cfg, _ := s.TLSConfig().GetConfigForClient(h)
	if _, err := cfg.GetCertificate(h); !errors.Is(err, ErrNoCertificate) {
		t.Errorf("without manager: %v", err)
	}
	want := &tls.Certificate{}
	s.SetManager(func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return want, nil })
	for _, name := range []string{"m.example", "", "other.example"} {
		h := &tls.ClientHelloInfo{ServerName: name}
		if got, err := cfg.GetCertificate(h); got != want || err != nil {
			t.Errorf("%q: %v, %v", name, got, err)
		}
	}
	if got := s.Select("m.example"); got != nil {
		t.Errorf("Select without files: %v", got)
	}
}

// FuzzManagedHandshake: any SNI name and ALPN offer get a config and a
// certificate (a managed name the manager's, another the files'), never a
// panic.
func FuzzManagedHandshake(f *testing.F) {
	ca := testcert.NewCA(f, "fuzz CA")
	a := ca.Leaf(f, "a", []string{"a.example"}, zero, zero)
	s, err := New(Options{Certificates: files(a), ManagedNames: []string{"m.example"}})
	if err != nil {
		f.Fatal(err)
	}
	managed := &tls.Certificate{}
	s.SetManager(func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return managed, nil })
	for _, seed := range []struct{ name, proto string }{
		{"m.example", ""}, {"M.EXAMPLE.", ACMETLS1}, {"a.example", "http/1.1"}, {"", ACMETLS1}, {"\x00", "\xff"},
	} {
		f.Add(seed.name, seed.proto)
	}
	f.Fuzz(func(t *testing.T, name, proto string) {
		h := &tls.ClientHelloInfo{ServerName: name}
		if proto != "" {
			h.SupportedProtos = []string{proto}
		}
		cfg, err := s.TLSConfig().GetConfigForClient(h)
		if err != nil || cfg == nil {
			t.Fatalf("config: %v", err)
		}
		got, err := cfg.GetCertificate(h)
		if err != nil || got == nil {
			t.Fatalf("certificate: %v", err)
		}
		if normName(name) == "m.example" && got != managed {
			t.Fatalf("managed name %q got a file's certificate", name)
		}
	})
}
