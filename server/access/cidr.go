package access

import (
	"errors"
	"net/netip"
	"strings"
)

// ErrBadCIDR is returned for a list entry that is neither an address nor
// a CIDR prefix.
var ErrBadCIDR = errors.New("access: not an IP address or CIDR prefix")

// Prefixes is an immutable set of IP prefixes. IPv4 and IPv6 are kept
// apart and an IPv4-mapped IPv6 address is matched as IPv4, so
// "10.0.0.0/8" also holds "::ffff:10.1.2.3" (a dual-stack socket's view of
// an IPv4 peer). A nil *Prefixes is the empty set.
//
// Lookups scan the list: configurations hold a handful of prefixes, and a
// scan of a few masked compares costs less than any tree walk at that size
// (and allocates nothing).
type Prefixes struct {
	v4, v6 []netip.Prefix
}

// ParsePrefixes parses entries written as CIDR prefixes ("10.0.0.0/8") or
// single addresses ("192.0.2.7", taken as /32 or /128). It returns the
// index of the first bad entry with ErrBadCIDR.
func ParsePrefixes(list []string) (*Prefixes, int, error) {
	p := &Prefixes{}
	for i, s := range list {
		s = strings.TrimSpace(s)
		var pf netip.Prefix
		var err error
		if strings.Contains(s, "/") {
			pf, err = netip.ParsePrefix(s)
		} else {
			var a netip.Addr
			a, err = netip.ParseAddr(s)
			if err == nil && a.Zone() != "" {
				err = ErrBadCIDR
			}
			if err == nil {
				pf = netip.PrefixFrom(a, a.BitLen())
			}
		}
		if err != nil {
			return nil, i, ErrBadCIDR
		}
		p.add(pf)
	}
	return p, 0, nil
}

// NewPrefixes returns the set of ps.
func NewPrefixes(ps []netip.Prefix) *Prefixes {
	p := &Prefixes{}
	for _, pf := range ps {
		p.add(pf)
	}
	return p
}

func (p *Prefixes) add(pf netip.Prefix) {
	a := pf.Addr()
	if a.Is4In6() && pf.Bits() >= 96 {
		pf = netip.PrefixFrom(a.Unmap(), pf.Bits()-96)
		a = pf.Addr()
	}
	pf = pf.Masked()
	if a.Is4() {
		p.v4 = append(p.v4, pf)
	} else {
		p.v6 = append(p.v6, pf)
	}
}

// Empty reports whether the set holds no prefix.
func (p *Prefixes) Empty() bool { return p == nil || len(p.v4)+len(p.v6) == 0 }

// Contains reports whether a is in the set.
func (p *Prefixes) Contains(a netip.Addr) bool {
	if p == nil || !a.IsValid() {
		return false
	}
	a = a.Unmap()
	list := p.v6
	if a.Is4() {
		list = p.v4
	} else {
		a = a.WithZone("")
	}
	for _, pf := range list {
		if pf.Contains(a) {
			return true
		}
	}
	return false
}

// List returns the prefixes in text form (for the effective config).
func (p *Prefixes) List() []string {
	if p == nil {
		return nil
	}
	var out []string
	for _, pf := range append(append([]netip.Prefix(nil), p.v4...), p.v6...) {
		out = append(out, pf.String())
	}
	return out
}

// Verdict is an allow/deny decision.
type Verdict uint8

const (
	Allowed Verdict = iota
	Denied
)

// Rules are an allow list and a deny list. Deny wins: an address in both
// is denied (as nginx's order of "deny" before "allow" for the same
// client, and so that a deny carved out of a wide allow works). With an
// allow list, an address outside it is denied; without one, everything
// not denied is allowed.
type Rules struct {
	Allow, Deny *Prefixes
}

// Check decides for a.
func (r *Rules) Check(a netip.Addr) Verdict {
	if r.Deny.Contains(a) {
		return Denied
	}
	if !r.Allow.Empty() && !r.Allow.Contains(a) {
		return Denied
	}
	return Allowed
}

// Active reports whether the rules restrict anything.
func (r *Rules) Active() bool { return r != nil && (!r.Allow.Empty() || !r.Deny.Empty()) }
