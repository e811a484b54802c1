package access

import (
	"net/netip"
	"testing"

	phttp "github.com/simdedge/simdedge/parse/http"
)

func mustPrefixes(t testing.TB, list ...string) *Prefixes {
	t.Helper()
	p, i, err := ParsePrefixes(list)
	if err != nil {
		t.Fatalf("entry %d: %v", i, err)
	}
	return p
}

func TestPrefixes(t *testing.T) {
	p := mustPrefixes(t, "10.0.0.0/8", "192.0.2.7", "2001:db8::/32", "::ffff:198.51.100.0/120")
	for _, tc := range []struct {
		a    string
		want bool
	}{
		{"10.1.2.3", true}, {"::ffff:10.1.2.3", true}, {"11.0.0.1", false},
		{"192.0.2.7", true}, {"192.0.2.8", false},
		{"2001:db8::1", true}, {"2001:db9::1", false},
		{"198.51.100.9", true}, {"198.51.101.9", false},
	} {
		if got := p.Contains(netip.MustParseAddr(tc.a)); got != tc.want {
			t.Errorf("Contains(%s) = %v", tc.a, got)
		}
	}
	var nilSet *Prefixes
	if nilSet.Contains(netip.MustParseAddr("10.0.0.1")) || !nilSet.Empty() {
		t.Error("nil set is not empty")
	}
	for _, bad := range []string{"", "10.0.0.0/33", "example.com", "fe80::1%eth0", "10.0.0.1/8/8"} {
		if _, i, err := ParsePrefixes([]string{"10.0.0.0/8", bad}); err != ErrBadCIDR || i != 1 {
			t.Errorf("%q: entry %d, %v", bad, i, err)
		}
	}
}

// TestRulesDenyWins: deny wins over allow; an allow list denies the rest.
func TestRulesDenyWins(t *testing.T) {
	r := Rules{Allow: mustPrefixes(t, "192.0.2.0/24"), Deny: mustPrefixes(t, "192.0.2.66/32")}
	for a, want := range map[string]Verdict{"192.0.2.1": Allowed, "192.0.2.66": Denied, "198.51.100.1": Denied} {
		if got := r.Check(netip.MustParseAddr(a)); got != want {
			t.Errorf("%s: %v, want %v", a, got, want)
		}
	}
	d := Rules{Deny: mustPrefixes(t, "10.0.0.0/8")}
	if d.Check(netip.MustParseAddr("10.9.9.9")) != Denied || d.Check(netip.MustParseAddr("11.0.0.1")) != Allowed {
		t.Error("deny-only rules")
	}
}

func xff(values ...string) phttp.Headers {
	var hs phttp.Headers
	hs = append(hs, phttp.Header{Name: []byte("Host"), Value: []byte("h")})
	for _, v := range values {
		hs = append(hs, phttp.Header{Name: []byte("x-forwarded-for"), Value: []byte(v)})
	}
	return hs
}

func TestClientIP(t *testing.T) {
	trusted := mustPrefixes(t, "10.0.0.0/8", "2001:db8::/32")
	for _, tc := range []struct {
		peer string
		hs   phttp.Headers
		want string
	}{
		// An untrusted peer's field is ignored.
		{"203.0.113.1", xff("198.51.100.1"), "203.0.113.1"},
		// A trusted peer: the rightmost untrusted entry.
		{"10.0.0.1", xff("198.51.100.1"), "198.51.100.1"},
		{"10.0.0.1", xff("1.1.1.1, 198.51.100.1, 10.0.0.2"), "198.51.100.1"},
		// Several lines form one list; the last line is the nearest.
		{"10.0.0.1", xff("1.1.1.1, 198.51.100.1", "10.0.0.3"), "198.51.100.1"},
		// All trusted: the leftmost.
		{"10.0.0.1", xff("10.0.0.9, 10.0.0.8"), "10.0.0.9"},
		// No field: the peer.
		{"10.0.0.1", xff(), "10.0.0.1"},
		// Garbage stops the walk at the last address reached.
		{"10.0.0.1", xff("198.51.100.1, nonsense, 10.0.0.5"), "10.0.0.5"},
		{"10.0.0.1", xff("nonsense"), "10.0.0.1"},
		// Ports, brackets, IPv6, empty elements.
		{"10.0.0.1", xff("198.51.100.1:4711"), "198.51.100.1"},
		{"10.0.0.1", xff("[2001:db9::1]:443"), "2001:db9::1"},
		{"2001:db8::5", xff("2001:db9::7"), "2001:db9::7"},
		{"10.0.0.1", xff(" , 198.51.100.1 ,, "), "198.51.100.1"},
		{"10.0.0.1", xff("fe80::1%eth0"), "10.0.0.1"},
		{"::ffff:10.0.0.1", xff("198.51.100.1"), "198.51.100.1"},
	} {
		got := ClientIP(netip.MustParseAddr(tc.peer).Unmap(), trusted, tc.hs)
		if got != netip.MustParseAddr(tc.want) {
			t.Errorf("peer %s %q: %s, want %s", tc.peer, tc.hs, got, tc.want)
		}
	}
}

func TestClientIPAllocs(t *testing.T) {
	trusted := mustPrefixes(t, "10.0.0.0/8")
	hs := xff("1.1.1.1, 198.51.100.1, 10.0.0.2")
	peer := netip.MustParseAddr("10.0.0.1")
	if n := testing.AllocsPerRun(100, func() { ClientIP(peer, trusted, hs) }); n != 0 {
		t.Errorf("%v allocations", n)
	}
}

func FuzzClientIP(f *testing.F) {
	f.Add("1.1.1.1, 10.0.0.2", "[::1]:80")
	f.Add("", ",,,")
	trusted := NewPrefixes([]netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("::1/128")})
	peer := netip.MustParseAddr("10.0.0.1")
	f.Fuzz(func(t *testing.T, a, b string) {
		got := ClientIP(peer, trusted, xff(a, b))
		if !got.IsValid() {
			t.Fatalf("invalid address for %q %q", a, b)
		}
	})
}
