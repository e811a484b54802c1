package discover

import (
	"errors"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// SRVScheme prefixes a target whose host, port and weight come from SRV
// records: "dns+srv://_http._tcp.api.internal" (the form Consul, Kubernetes
// headless services and HAProxy's server-template read).
const SRVScheme = "dns+srv://"

// Name is one configured target that discovery resolves.
type Name struct {
	// Host is the name to look up (an SRV owner name for SRV).
	Host string
	// Port is the port of A/AAAA answers (unused for SRV).
	Port uint16
	// Weight is given to every address the name resolves to (SRV
	// records carry their own). 0 means 1.
	Weight int
	SRV    bool
}

// Errors of ParseName.
var (
	ErrTarget = errors.New("discover: target must be host:port or dns+srv://NAME")
	ErrIsIP   = errors.New("discover: target is an IP address (nothing to resolve)")
)

// maxNameLen is a DNS name's limit (RFC 1035 §2.3.4, in text form).
const maxNameLen = 253

// ParseName reads a configured target: "host:port" with a host name, or
// "dns+srv://NAME". An IP address is ErrIsIP: it stays as it is.
func ParseName(target string, weight int) (Name, error) {
	if rest, ok := strings.CutPrefix(target, SRVScheme); ok {
		if !validName(rest) {
			return Name{}, ErrTarget
		}
		return Name{Host: rest, Weight: weight, SRV: true}, nil
	}
	host, port, err := net.SplitHostPort(target)
	if err != nil {
		return Name{}, ErrTarget
	}
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil || p == 0 {
		return Name{}, ErrTarget
	}
	if _, err := netip.ParseAddr(host); err == nil {
		return Name{}, ErrIsIP
	}
	if !validName(host) {
		return Name{}, ErrTarget
	}
	return Name{Host: host, Port: uint16(p), Weight: weight}, nil
}

// IsName reports whether target is one discovery resolves: an SRV target
// or host:port with a host name.
func IsName(target string) bool {
	_, err := ParseName(target, 0)
	return err == nil
}

// validName accepts a DNS name in text form: labels of letters, digits,
// '-' and '_' (SRV owner names), 1-63 bytes each, a trailing dot allowed.
func validName(s string) bool {
	s = strings.TrimSuffix(s, ".")
	if s == "" || len(s) > maxNameLen {
		return false
	}
	for l := range strings.SplitSeq(s, ".") {
		if l == "" || len(l) > 63 {
			return false
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}

// fqdn is s with its trailing dot, as a DNS query names it.
func fqdn(s string) string {
	if strings.HasSuffix(s, ".") {
		return s
	}
	return s + "."
}
