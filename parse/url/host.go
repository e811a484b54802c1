package url

import "github.com/simdedge/simdedge/asm"

// Host parsing, URL Standard §3.5 "host parsing".

// isForbiddenHost is the forbidden host code point set (§3.2).
func isForbiddenHost(b byte) bool {
	switch b {
	case 0x00, '\t', '\n', '\r', ' ', '#', '/', ':', '<', '>', '?', '@', '[', '\\', ']', '^', '|':
		return true
	}
	return false
}

// isForbiddenDomain is the forbidden domain code point set (§3.2).
func isForbiddenDomain(b byte) bool {
	return isForbiddenHost(b) || b < 0x20 || b == '%' || b == 0x7f
}

var (
	forbiddenHost   = newByteSet(isForbiddenHost)
	forbiddenDomain = newByteSet(isForbiddenDomain)
)

// byteSet is a 256-entry membership table built from a predicate.
type byteSet [256]bool

func newByteSet(fn func(byte) bool) *byteSet {
	var s byteSet
	for b := range 256 {
		s[b] = fn(byte(b))
	}
	return &s
}

// hostParser holds scratch buffers reused across parses.
type hostParser struct {
	decoded []byte // percent-decoded input
	mapped  []byte // IDNA output
}

// parseHost is the host parser (§3.5). It appends the serialized host to
// dst and returns its type. isOpaque is "not special".
func (hp *hostParser) parseHost(dst []byte, in string, isOpaque bool) ([]byte, hostType, error) {
	if len(in) > 0 && in[0] == '[' {
		if in[len(in)-1] != ']' || len(in) < 2 {
			return dst, hostNull, ErrInvalidIPv6
		}
		addr, err := parseIPv6(in[1 : len(in)-1])
		if err != nil {
			return dst, hostNull, err
		}
		return appendIPv6(dst, addr), hostIPv6, nil
	}
	if isOpaque {
		return parseOpaqueHost(dst, in)
	}
	// Steps 4-5: percent-decode, then domain to ASCII.
	domain := in
	for i := 0; i < len(in); i++ {
		if in[i] == '%' {
			hp.decoded = appendDecoded(hp.decoded[:0], in)
			domain = bytesString(hp.decoded)
			break
		}
	}
	start := len(dst)
	var err error
	dst, err = domainToASCII(dst, domain, &hp.mapped)
	if err != nil {
		return dst[:start], hostNull, err
	}
	ascii := bytesString(dst[start:])
	if start == len(dst) {
		return dst, hostNull, ErrInvalidDomain
	}
	for i := 0; i < len(ascii); i++ {
		if forbiddenDomain[ascii[i]] {
			return dst[:start], hostNull, ErrForbiddenHost
		}
	}
	if endsInNumber(ascii) {
		a, err := parseIPv4(ascii)
		if err != nil {
			return dst[:start], hostNull, err
		}
		return appendIPv4(dst[:start], a), hostIPv4, nil
	}
	return dst, hostDomain, nil
}

// parseOpaqueHost is the opaque-host parser (§3.5).
func parseOpaqueHost(dst []byte, in string) ([]byte, hostType, error) {
	for i := 0; i < len(in); i++ {
		if forbiddenHost[in[i]] {
			return dst, hostNull, ErrForbiddenHost
		}
	}
	return appendEncoded(dst, in, c0ControlSet), hostOpaque, nil
}

// domainToASCII is "domain to ASCII" with beStrict false (§3.3): UTS #46
// ToASCII with CheckHyphens=false, CheckBidi=true, CheckJoiners=true,
// UseSTD3ASCIIRules=false, Transitional_Processing=false,
// VerifyDnsLength=false. An all-ASCII domain is only lowercased: UTS #46
// maps nothing else in ASCII when STD3 rules are off, and the WPT data
// (toascii.json: "xn--a" stays "xn--a", but "xn--a.ß" fails) expects
// punycode labels to be validated only when the domain also has non-ASCII
// code points, as browsers and Ada do.
func domainToASCII(dst []byte, domain string, scratch *[]byte) ([]byte, error) {
	if asm.ValidASCIIString(domain) {
		start := len(dst)
		dst = append(dst, domain...)
		asm.ToLowerInPlace(dst[start:])
		return dst, nil
	}
	return uts46ToASCII(dst, domain, scratch)
}
