package router

import (
	"net/netip"
	"testing"
)

// TestRateKey: IPv4 clients are keyed by address, IPv6 ones by their /64.
func TestRateKey(t *testing.T) {
	for in, want := range map[string]string{
		"192.0.2.1":           "192.0.2.1",
		"2001:db8:1:2:3::4":   "2001:db8:1:2::",
		"2001:db8:1:2:ffff::": "2001:db8:1:2::",
	} {
		if got := rateKey(netip.MustParseAddr(in)); got != netip.MustParseAddr(want) {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
	}
}
