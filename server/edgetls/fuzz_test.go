package edgetls

import (
	"strings"
	"testing"
	"time"

	"github.com/simdedge/simdedge/internal/testcert"
)

// FuzzSelect: any SNI name gets a certificate, never a panic; a name a
// certificate names exactly gets that one.
func FuzzSelect(f *testing.F) {
	ca := testcert.NewCA(f, "fuzz CA")
	a := ca.Leaf(f, "a", []string{"a.example"}, zero, zero)
	w := ca.Leaf(f, "w", []string{"*.w.example"}, zero, zero)
	s, err := New(Options{Certificates: files(a, w)})
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range []string{"", "a.example", "x.w.example", ".", "..", "*.", "A.EXAMPLE.", "\x00", "é.w.example"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, name string) {
		got := s.Select(name)
		if got == nil || got.Leaf == nil {
			t.Fatal("no certificate")
		}
		n := strings.ToLower(strings.TrimSuffix(name, "."))
		if n == "a.example" && got.Leaf.DNSNames[0] != "a.example" {
			t.Fatalf("exact name %q got %v", name, got.Leaf.DNSNames)
		}
		if i := strings.IndexByte(n, '.'); i > 0 && n[i:] == ".w.example" && got.Leaf.DNSNames[0] != "*.w.example" {
			t.Fatalf("wildcard name %q got %v", name, got.Leaf.DNSNames)
		}
	})
}

var zero time.Time
