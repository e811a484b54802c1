package edgetls

import (
	"crypto/tls"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/simdedge/simdedge/internal/testcert"
)

// certs is the test PKI: a CA, leaves for two names and a wildcard, an
// expired one and one that expires within the warning span.
type certs struct {
	ca                        *testcert.CA
	a, b, wild, expired, soon *testcert.Pair
}

func newCerts(t *testing.T) *certs {
	ca := testcert.NewCA(t, "edgetls test CA")
	now := time.Now()
	return &certs{
		ca:      ca,
		a:       ca.Leaf(t, "a", []string{"a.example"}, time.Time{}, time.Time{}),
		b:       ca.Leaf(t, "b", []string{"b.example"}, time.Time{}, time.Time{}),
		wild:    ca.Leaf(t, "wild", []string{"*.w.example"}, time.Time{}, time.Time{}),
		expired: ca.Leaf(t, "expired", []string{"old.example"}, now.Add(-48*time.Hour), now.Add(-24*time.Hour)),
		soon:    ca.Leaf(t, "soon", []string{"soon.example"}, now.Add(-time.Hour), now.Add(3*24*time.Hour)),
	}
}

func files(ps ...*testcert.Pair) []CertFiles {
	var out []CertFiles
	for _, p := range ps {
		out = append(out, CertFiles{Cert: p.CertFile, Key: p.KeyFile})
	}
	return out
}

func TestSelectBySNI(t *testing.T) {
	c := newCerts(t)
	s, err := New(Options{Certificates: files(c.a, c.b, c.wild)})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		want *testcert.Pair
	}{
		{"a.example", c.a},
		{"B.Example.", c.b},      // case and trailing dot
		{"x.w.example", c.wild},  // wildcard
		{"X.W.EXAMPLE", c.wild},  //
		{"y.x.w.example", c.a},   // one label only: default
		{"w.example", c.a},       // the wildcard does not cover its parent
		{"", c.a},                // no SNI: default
		{"unknown.example", c.a}, // default
		{".", c.a},               //
		{"*.w.example", c.wild},  // literal (harmless)
	} {
		got := s.Select(tc.name)
		if got.Leaf.SerialNumber.Cmp(tc.want.Leaf.SerialNumber) != 0 {
			t.Errorf("Select(%q) = %v, want %v", tc.name, got.Leaf.DNSNames, tc.want.Leaf.DNSNames)
		}
	}
}

func TestConfigOffers(t *testing.T) {
	c := newCerts(t)
	s, err := New(Options{Certificates: files(c.a), ClientCA: c.ca.File, ClientAuth: ClientAuthRequire})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := s.TLSConfig().GetConfigForClient(&tls.ClientHelloInfo{ServerName: "a.example"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.MinVersion != tls.VersionTLS12 || cfg.MaxVersion != tls.VersionTLS13 {
		t.Errorf("versions %x-%x", cfg.MinVersion, cfg.MaxVersion)
	}
	if cfg.ClientAuth != tls.RequireAndVerifyClientCert || cfg.ClientCAs == nil {
		t.Errorf("client auth %v", cfg.ClientAuth)
	}
	if len(cfg.NextProtos) != 2 || cfg.NextProtos[0] != "h2" || cfg.NextProtos[1] != "http/1.1" {
		t.Errorf("alpn %v", cfg.NextProtos)
	}
	for _, id := range cfg.CipherSuites {
		name := tls.CipherSuiteName(id)
		if !strings.HasPrefix(name, "TLS_ECDHE_") || !(strings.Contains(name, "GCM") || strings.Contains(name, "CHACHA20")) {
			t.Errorf("suite %s offered: not ECDHE with AEAD", name)
		}
	}
}

func TestNewRejects(t *testing.T) {
	c := newCerts(t)
	for _, tc := range []struct {
		name string
		o    Options
		want error
	}{
		{"none", Options{}, ErrNoCertificates},
		{"version", Options{Certificates: files(c.a), MinVersion: tls.VersionTLS11}, ErrVersion},
		{"mode", Options{Certificates: files(c.a), ClientCA: c.ca.File, ClientAuth: "maybe"}, ErrClientAuthMode},
		{"ca", Options{Certificates: files(c.a), ClientCA: c.a.KeyFile}, ErrClientCA},
	} {
		if _, err := New(tc.o); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	// A key that does not match its certificate.
	if _, err := New(Options{Certificates: []CertFiles{{Cert: c.a.CertFile, Key: c.b.KeyFile}}}); err == nil || !strings.Contains(err.Error(), "certificates[0]") {
		t.Errorf("mismatched pair: %v", err)
	}
}

// TestReloadKeepsOldOnBadFile: a reload with a bad file keeps serving the
// previous certificates and says why; a good one swaps them.
func TestReloadKeepsOldOnBadFile(t *testing.T) {
	c := newCerts(t)
	s, err := New(Options{Certificates: files(c.a)})
	if err != nil {
		t.Fatal(err)
	}
	bad := t.TempDir() + "/bad.pem"
	os.WriteFile(bad, []byte("not a certificate"), 0o600)
	err = s.Reload(Options{Certificates: []CertFiles{{Cert: bad, Key: c.a.KeyFile}}})
	if !errors.Is(err, ErrReloadKept) || !strings.Contains(err.Error(), "bad.pem") {
		t.Errorf("bad reload: %v", err)
	}
	if got := s.Select(""); got.Leaf.SerialNumber.Cmp(c.a.Leaf.SerialNumber) != 0 {
		t.Error("bad reload replaced the certificate")
	}
	if err := s.Reload(Options{Certificates: files(c.b)}); err != nil {
		t.Fatal(err)
	}
	if got := s.Select(""); got.Leaf.SerialNumber.Cmp(c.b.Leaf.SerialNumber) != 0 {
		t.Error("good reload did not swap the certificate")
	}
}

func TestCheck(t *testing.T) {
	c := newCerts(t)
	now := time.Now()
	if w, err := Check(Options{Certificates: files(c.a, c.wild)}, now); err != nil || len(w) != 0 {
		t.Errorf("good: %v %v", w, err)
	}
	if _, err := Check(Options{Certificates: files(c.a, c.expired)}, now); !errors.Is(err, ErrExpired) || !strings.Contains(err.Error(), "certificates[1]") {
		t.Errorf("expired: %v", err)
	}
	if w, err := Check(Options{Certificates: files(c.soon)}, now); err != nil || len(w) != 1 || !strings.Contains(w[0], "14 days") {
		t.Errorf("expiring soon: %v %v", w, err)
	}
	if _, err := Check(Options{Certificates: files(c.a)}, c.a.Leaf.NotBefore.Add(-time.Minute)); !errors.Is(err, ErrNotYetValid) {
		t.Errorf("not yet valid: %v", err)
	}
}

// TestTicketKeysRotate: a handshake after the rotation period installs a
// new encrypting key and keeps the old ones, up to TicketKeysKept.
func TestTicketKeysRotate(t *testing.T) {
	c := newCerts(t)
	s, err := New(Options{Certificates: files(c.a), TicketRotation: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	first := s.tickets.keys[0]
	now := time.Now()
	s.tickets.rotateIfDue(s.base, time.Minute, now) // not due
	if len(s.tickets.keys) != 1 {
		t.Fatalf("rotated early: %d keys", len(s.tickets.keys))
	}
	for i := 1; i <= TicketKeysKept+3; i++ {
		s.tickets.rotateIfDue(s.base, time.Minute, now.Add(time.Duration(i)*time.Minute))
	}
	k := s.tickets.keys
	if len(k) != TicketKeysKept || k[0] == first {
		t.Errorf("%d keys kept, newest first %v", len(k), k[0] == first)
	}
}
