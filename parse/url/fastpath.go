package url

import (
	"strings"

	"github.com/simdedge/simdedge/asm"
)

// The fast path handles the common case, an absolute http(s) URL in plain
// form, without the state machine: "http://" or "https://" in lowercase,
// an ASCII domain host (letters, digits, '-', '.', '_') whose last label is
// not numeric, an optional port, and a path without backslashes or dot
// segments, with no tab, newline or surrounding C0/space. Everything else
// returns false and goes to the full parser. FuzzFastPath checks that both
// produce the same URL wherever the fast path accepts.

func isFastHostByte(b byte) bool {
	return isASCIIAlpha(b) || isASCIIDigit(b) || b == '-' || b == '.' || b == '_'
}

var fastHost = newByteSet(isFastHostByte)

const (
	httpPrefix  = "http://"
	httpsPrefix = "https://"
)

// parseFast parses input into u when it is a plain http(s) URL; it reports
// false (leaving u's offsets unspecified) otherwise.
func (u *URL) parseFast(input string, reuse bool) bool {
	var st schemeType
	var p int
	switch {
	case strings.HasPrefix(input, httpsPrefix):
		st, p = schemeHTTPS, len(httpsPrefix)
	case strings.HasPrefix(input, httpPrefix):
		st, p = schemeHTTP, len(httpPrefix)
	default:
		return false
	}
	if isC0OrSpace(input[len(input)-1]) || asm.IndexTabNewlineString(input) >= 0 {
		return false
	}
	// Host.
	hs := p
	upper := false
	for p < len(input) && fastHost[input[p]] {
		upper = upper || (input[p] >= 'A' && input[p] <= 'Z')
		p++
	}
	host := input[hs:p]
	if host == "" || endsInNumber(host) {
		return false
	}
	// Port.
	port := omitted
	if p < len(input) && input[p] == ':' {
		p++
		ps := p
		for p < len(input) && isASCIIDigit(input[p]) {
			p++
		}
		if p > ps {
			n, ok := parsePort(input[ps:p])
			if !ok {
				return false
			}
			if n != defaultPorts[st] {
				port = n
			}
		}
	}
	if p < len(input) && input[p] != '/' && input[p] != '?' && input[p] != '#' {
		return false
	}
	// Path: up to '?' or '#'; no backslash, no dot segment.
	ps := p
	for p < len(input) && input[p] != '?' && input[p] != '#' {
		c := input[p]
		if c == '\\' {
			return false
		}
		if c == '/' {
			e := p + 1
			for e < len(input) && input[e] != '/' && input[e] != '?' && input[e] != '#' && input[e] != '\\' {
				e++
			}
			seg := input[p+1 : e]
			if len(seg) > 0 && (seg[0] == '.' || seg[0] == '%') && (isSingleDot(seg) || isDoubleDot(seg)) {
				return false
			}
			p = e
			continue
		}
		p++
	}
	path := input[ps:p]

	// Serialize straight into href.
	b := u.href[:0]
	if !reuse {
		b = make([]byte, 0, len(input)+1)
	}
	b = append(b, input[:hs]...)
	u.schemeEnd = uint32(len(input[:hs]) - len("://"))
	at := uint32(len(b))
	u.userStart, u.userEnd, u.passStart, u.passEnd, u.hostStart = at, at, at, at, at
	b = append(b, host...)
	if upper {
		asm.ToLowerInPlace(b[at:])
	}
	u.hostEnd = uint32(len(b))
	if port != omitted {
		b = appendPort(append(b, ':'), port)
	}
	u.pathStart = uint32(len(b))
	if path == "" {
		b = append(b, '/')
	} else {
		b = appendEncoded(b, path, pathSet)
	}
	u.queryStart, u.fragStart = omitted, omitted
	if p < len(input) && input[p] == '?' {
		u.queryStart = uint32(len(b))
		b = append(b, '?')
		q := input[p+1:]
		if i := strings.IndexByte(q, '#'); i >= 0 {
			q = q[:i]
		}
		b = appendEncoded(b, q, specialQuerySet)
		p += 1 + len(q)
	}
	if p < len(input) {
		u.fragStart = uint32(len(b))
		b = appendEncoded(append(b, '#'), input[p+1:], fragmentSet)
	}
	u.href = b
	u.scheme = st
	u.host = hostDomain
	u.port = port
	u.opaquePath = false
	return true
}
