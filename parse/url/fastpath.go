package url

import (
	"strings"

	"github.com/simdedge/simdedge/asm"
)

// The fast path handles the common case, an absolute http(s) URL in plain
// form, without the state machine: "http://" or "https://" in lowercase,
// an ASCII domain host (letters, digits, '-', '.', '_') or IPv4 address,
// an optional port, and a path without backslashes or dot
// segments, with no tab, newline or surrounding C0/space. Everything else
// returns false and goes to the full parser. FuzzFastPath checks that both
// produce the same URL wherever the fast path accepts.

func isFastHostByte(b byte) bool {
	return isASCIIAlpha(b) || isASCIIDigit(b) || b == '-' || b == '.' || b == '_'
}

// Per-byte classes of the fast path's scans, one table lookup per byte.
const (
	fastHostOK    = 1 << iota // a byte the fast path accepts in a host
	fastHostUpper             // an ASCII uppercase letter (host needs lowercasing)
	fastPathEnc               // the path percent-encode set
	fastPathStop              // ends the plain path run: / ? # \ and tab/newline
)

func fastClassOf(b byte) uint8 {
	var c uint8
	if isFastHostByte(b) {
		c |= fastHostOK
	}
	if b >= 'A' && b <= 'Z' {
		c |= fastHostUpper
	}
	if isPathSet(b) {
		c |= fastPathEnc
	}
	switch b {
	case '/', '?', '#', '\\', '\t', '\n', '\r':
		c |= fastPathStop
	}
	return c
}

var fastClass = func() (t [256]uint8) {
	for b := range 256 {
		t[b] = fastClassOf(byte(b))
	}
	return t
}()

const (
	httpPrefix  = "http://"
	httpsPrefix = "https://"
)

// fastResult is what fastPath did.
type fastResult uint8

const (
	fastRejected fastResult = iota // not a plain http(s) URL: run the state machine
	fastDone                       // parsed
	fastSame                       // parsed, and the href is the input unchanged
	fastNotSame                    // fastView only: plain, but the href differs from the input: nothing written
	fastNoRoom                     // plain, but the href might outgrow the fixed buffer: nothing written
)

// fastMode says where fastPath may write.
type fastMode uint8

const (
	fastGrow  fastMode = iota // append to buf, growing it as needed
	fastFixed                 // never grow buf: fastNoRoom when the href might not fit
	fastView                  // write nothing: fastSame when the href is the input, else fastNotSame
)

// fastPath parses input when it is a plain http(s) URL: it appends the
// href to buf[:0], sets u's offsets and returns the href and fastDone, or
// fastSame when it knows the href is the input unchanged (u.href is left
// to the caller). With fastFixed, it never grows buf: when the href could
// outgrow it, it writes nothing and returns fastNoRoom. With fastView it
// writes nothing and only sets u's offsets, for an input that is its own
// href (fastSame); for other plain inputs it returns fastNotSame.
// Otherwise it returns fastRejected, leaving u's offsets unspecified.
func (u *URL) fastPath(input string, buf []byte, mode fastMode) ([]byte, fastResult) {
	var st schemeType
	var p int
	switch {
	case strings.HasPrefix(input, httpsPrefix):
		st, p = schemeHTTPS, len(httpsPrefix)
	case strings.HasPrefix(input, httpPrefix):
		st, p = schemeHTTP, len(httpPrefix)
	default:
		return nil, fastRejected
	}
	// Tabs and newlines are rejected by the host and path scans below
	// (they are in no host class and stop the path run) and by one scan
	// over the query and fragment, so no separate pass over the input.
	if isC0OrSpace(input[len(input)-1]) {
		return nil, fastRejected
	}
	// Host.
	hs := p
	var hostClass uint8 = fastHostOK
	for p < len(input) {
		c := fastClass[input[p]]
		if c&fastHostOK == 0 {
			break
		}
		hostClass |= c
		p++
	}
	host := input[hs:p]
	if host == "" {
		return nil, fastRejected
	}
	// A host whose last label is numeric must be an IPv4 address (§3.5
	// step 7); failures go to the full parser to report them.
	ipv4, isIPv4 := uint32(0), endsInNumber(host)
	if isIPv4 {
		a, err := parseIPv4(host)
		if err != nil {
			return nil, fastRejected
		}
		ipv4 = a
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
				return nil, fastRejected
			}
			if n != defaultPorts[st] {
				port = n
			}
		}
	}
	if p < len(input) && input[p] != '/' && input[p] != '?' && input[p] != '#' {
		return nil, fastRejected
	}
	// Path: up to '?' or '#'; no backslash, tab or newline, no dot segment.
	ps := p
	var pathClass uint8
	for p < len(input) {
		c := fastClass[input[p]]
		if c&fastPathStop == 0 {
			pathClass |= c
			p++
			continue
		}
		// A stop byte is '/' (never encoded) or ends or rejects the
		// path, so it leaves pathClass alone: the '?' or '#' after the
		// path must not mark the path as needing encoding.
		b := input[p]
		if b == '?' || b == '#' {
			break
		}
		if b != '/' {
			return nil, fastRejected
		}
		p++
		if p < len(input) && (input[p] == '.' || input[p] == '%') && dotSegmentAt(input[p:]) {
			return nil, fastRejected
		}
	}
	path := input[ps:p]
	rest := input[p:]
	if rest != "" && asm.IndexTabNewlineString(rest) >= 0 {
		return nil, fastRejected
	}

	// unchanged: the host stays as it is, there is no port and the path
	// needs no encoding, so scheme, host and path are the input's first
	// bytes unchanged.
	unchanged := !isIPv4 && hostClass&fastHostUpper == 0 && hs+len(host) == ps && path != "" && pathClass&fastPathEnc == 0
	switch {
	case mode == fastView && unchanged && plainRest(rest):
		u.setFastOffsets(st, hs, len(host), port, false)
		u.pathStart = u.hostEnd
		u.queryStart, u.fragStart = omitted, omitted
		if rest != "" && rest[0] == '?' {
			u.queryStart = uint32(p)
		}
		if i := strings.IndexByte(rest, '#'); i >= 0 {
			u.fragStart = uint32(p + i)
		}
		return nil, fastSame
	case mode == fastView:
		return nil, fastNotSame
	case mode == fastFixed && maxFastHref(hs, len(host), len(path), pathClass, len(rest)) > cap(buf):
		return nil, fastNoRoom
	}

	// Serialize straight into the buffer.
	b := buf[:0]
	u.setFastOffsets(st, hs, len(host), port, isIPv4)
	at := uint32(hs)
	if unchanged {
		// The common case: one copy instead of three.
		b = append(b, input[:ps+len(path)]...)
		u.pathStart = u.hostEnd
	} else {
		b = append(b, input[:hs]...)
		switch {
		case isIPv4:
			b = appendIPv4(b, ipv4)
		case hostClass&fastHostUpper != 0:
			b = append(b, host...)
			asm.ToLowerInPlace(b[at:])
		default:
			b = append(b, host...)
		}
		u.hostEnd = uint32(len(b))
		if port != omitted {
			b = appendPort(append(b, ':'), port)
		}
		u.pathStart = uint32(len(b))
		switch {
		case path == "":
			b = append(b, '/')
		case pathClass&fastPathEnc == 0:
			b = append(b, path...)
		default:
			b = appendEncoded(b, path, pathSet)
		}
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
	// With scheme, host and path copied unchanged, the query and fragment
	// were too exactly when encoding them added no byte: each encoded
	// byte grows, and nothing else is dropped or added after the path.
	if unchanged && len(b) == len(input) {
		return b, fastSame
	}
	return b, fastDone
}

// setFastOffsets sets what the fast path's URLs share: the scheme, no
// credentials, a host of hostLen bytes after the "://" that ends at hs,
// the port and the host's type. hostEnd assumes the host is written as
// it is in the input; the writing path corrects it for hosts it rewrites.
func (u *URL) setFastOffsets(st schemeType, hs, hostLen int, port uint32, isIPv4 bool) {
	u.schemeEnd = uint32(hs - len("://"))
	at := uint32(hs)
	u.userStart, u.userEnd, u.passStart, u.passEnd, u.hostStart = at, at, at, at, at
	u.hostEnd = at + uint32(hostLen)
	u.scheme = st
	u.host = hostDomain
	if isIPv4 {
		u.host = hostIPv4
	}
	u.port = port
	u.opaquePath = false
}

// plainRest reports whether the query and fragment of a fast-path input
// (rest: "", "?query[#fragment]" or "#fragment") need no percent-encoding,
// so that they are copied unchanged into the href.
func plainRest(rest string) bool {
	set := specialQuerySet
	for i := 0; i < len(rest); i++ {
		b := rest[i]
		if b == '#' && set == specialQuerySet {
			// The fragment starts: '#' itself is kept, what follows is
			// checked against the fragment set.
			set = fragmentSet
			continue
		}
		if set.in[b] {
			return false
		}
	}
	return true
}

// parsed reports whether the fast path parsed its input.
func (r fastResult) parsed() bool { return r == fastDone || r == fastSame }

// maxFastHref bounds the length of the href the fast path writes for a
// prefix of hs bytes, a host, path and the rest (query and fragment) of the
// given lengths: the host may grow to a dotted IPv4 address ("1" is
// "0.0.0.1"), the port takes at most 5 digits, an empty path becomes "/",
// and each percent-encoded byte takes 3 bytes (the path's only when the
// scan saw one to encode).
func maxFastHref(hs, host, path int, pathClass uint8, rest int) int {
	if pathClass&fastPathEnc != 0 {
		path *= encodedWidth
	}
	return hs + max(host, len("255.255.255.255")) + len(":65535") + max(path, len("/")) + encodedWidth*rest
}

// dotSegmentAt reports whether the path segment at the start of s (up to
// the next / ? # \ or the end) is a single- or double-dot segment.
func dotSegmentAt(s string) bool {
	const longestDotSegment = len("%2e%2e")
	e := 0
	for e < len(s) && e <= longestDotSegment && fastClass[s[e]]&fastPathStop == 0 {
		e++
	}
	seg := s[:e]
	return isSingleDot(seg) || isDoubleDot(seg)
}
