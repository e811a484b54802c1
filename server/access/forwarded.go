package access

import (
	"net/netip"
	"unsafe"

	"github.com/simdedge/simdedge/internal/ascii"
	phttp "github.com/simdedge/simdedge/parse/http"
)

// xffName is the de-facto standard field of the client chain behind proxies.
const xffName = "X-Forwarded-For"

// ClientIP is the address of the client a request comes from: peer (the
// connection's peer, or the source a PROXY protocol header gave) unless
// peer is a trusted proxy; then X-Forwarded-For is walked from the right
// (the entry the trusted proxy itself appended) past every trusted address
// to the first untrusted one, as nginx's realip with real_ip_recursive and
// Caddy's trusted_proxies do. Only what trusted proxies appended can be
// believed: entries to the left of the first untrusted one were written by
// the client and are ignored. If every entry is trusted the leftmost is
// the client; an entry that is not an address ends the walk at the last
// address reached (so a malformed field can never name an arbitrary
// client). Several X-Forwarded-For lines are one list, in order (RFC 9110
// §5.3). It allocates nothing.
func ClientIP(peer netip.Addr, trusted *Prefixes, hs phttp.Headers) netip.Addr {
	if trusted.Empty() || !trusted.Contains(peer) {
		return peer
	}
	cur := peer
	for i := len(hs) - 1; i >= 0; i-- {
		if !phttp.EqualFold(hs[i].Name, xffName) {
			continue
		}
		v := hs[i].Value
		end := len(v)
		for j := len(v) - 1; j >= -1; j-- {
			if j >= 0 && v[j] != ',' {
				continue
			}
			item := ascii.TrimOWS(v[j+1 : end])
			end = j
			if len(item) == 0 {
				continue // empty list elements are allowed (RFC 9110 §5.6.1)
			}
			a, ok := parseForwardedAddr(item)
			if !ok {
				return cur
			}
			cur = a
			if !trusted.Contains(a) {
				return a
			}
		}
	}
	return cur
}

// parseForwardedAddr reads an X-Forwarded-For entry: an IPv4 or IPv6
// address, optionally "[v6]" or with a port ("192.0.2.1:4711",
// "[2001:db8::1]:4711"), which some proxies write. Zones are refused.
func parseForwardedAddr(b []byte) (netip.Addr, bool) {
	if b[0] == '[' {
		end := -1
		for i, c := range b {
			if c == ']' {
				end = i
				break
			}
		}
		if end < 0 {
			return netip.Addr{}, false
		}
		b = b[1:end]
	} else if colons(b) == 1 {
		for i, c := range b {
			if c == ':' {
				b = b[:i]
				break
			}
		}
	}
	if len(b) == 0 {
		return netip.Addr{}, false
	}
	a, err := netip.ParseAddr(unsafe.String(unsafe.SliceData(b), len(b)))
	if err != nil || a.Zone() != "" {
		return netip.Addr{}, false
	}
	return a.Unmap(), true
}

func colons(b []byte) int {
	n := 0
	for _, c := range b {
		if c == ':' {
			n++
		}
	}
	return n
}
