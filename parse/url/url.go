package url

import (
	"strconv"
	"unsafe"
)

// omitted marks an absent optional component (port, query, fragment) in the
// uint32 offsets of a URL, like Ada's url_components::omitted. It can never
// be a valid offset because inputs are limited to MaxInputLen bytes.
const omitted = ^uint32(0)

// MaxInputLen is the longest input Parse accepts. Offsets are uint32 and
// percent-encoding can triple the length, so inputs are capped well below
// 4 GiB/3; 64 MiB is far beyond any real URL (browsers cap near 2 MiB).
// Longer inputs fail with ErrTooLong.
const MaxInputLen = 1 << 26

// hostType is the kind of host a URL has (URL Standard §3.1 "host").
type hostType uint8

const (
	hostNull   hostType = iota // no host (host is null)
	hostDomain                 // a domain, or the empty host
	hostIPv4                   // an IPv4 address, serialized dotted-decimal
	hostIPv6                   // an IPv6 address, serialized in brackets
	hostOpaque                 // an opaque host of a non-special URL
)

// A URL is a parsed URL in the URL Standard's serialized form: one
// normalized href buffer plus uint32 offsets of its components, after Ada's
// url_aggregator. Getters return views into that buffer without copying.
//
// Ownership: strings returned by the getters alias the URL's buffer. They
// stay valid and unchanged until the next ParseInto on the same URL (which
// reuses the buffer). Setters build a new buffer, so strings obtained
// before a setter call stay valid. A URL is not safe for concurrent
// mutation; concurrent reads are fine.
//
// The zero URL is not a valid URL (its getters return ""); obtain one
// from Parse or ParseInto. A failed ParseInto leaves dst unchanged.
type URL struct {
	href []byte
	components
	// rec is the full parser's scratch record, kept so that ParseInto
	// reuses its buffers instead of allocating; it also holds the error a
	// failed ParseInto returns. Parse leaves it nil: it is created on the
	// first ParseInto that needs it, which keeps a parsed URL small.
	rec *record
}

// components is everything in a URL but its buffers: pointer-free, so
// that Parse copies it into a new URL without write barriers.
type components struct {
	// Component offsets into href. With href laid out as
	//   scheme ":" ["//" [user [":" pass] "@"] host [":" port]] ["/."] path ["?" query] ["#" frag]
	// schemeEnd is the index of the ':' after the scheme; user, pass and
	// host are half-open ranges (all equal to schemeEnd+1 when the host is
	// null, empty when absent); the port digits lie between hostEnd+1 and
	// pathStart when port != omitted; pathStart is where the pathname
	// starts (after a "/." prefix, if any); queryStart and fragStart are
	// the indexes of '?' and '#', or omitted.
	schemeEnd          uint32
	userStart, userEnd uint32
	passStart, passEnd uint32
	hostStart, hostEnd uint32
	pathStart          uint32
	queryStart         uint32
	fragStart          uint32
	port               uint32 // the port number, or omitted
	host               hostType
	scheme             schemeType
	opaquePath         bool
	// inputHref is set when href views the input string of Parse or
	// ParseValue instead of a buffer of the URL's own: read-only.
	inputHref bool
}

// view returns href[i:j] as a string without copying (see the ownership
// note on URL).
func (u *URL) view(i, j uint32) string {
	if i >= j || int(j) > len(u.href) {
		// Empty component, or the zero URL (no href): getters of a zero
		// URL return "" instead of panicking.
		return ""
	}
	return unsafe.String(&u.href[i], int(j-i))
}

func (u *URL) pathEnd() uint32 {
	if u.queryStart != omitted {
		return u.queryStart
	}
	if u.fragStart != omitted {
		return u.fragStart
	}
	return uint32(len(u.href))
}

// Href returns the serialized URL (URL Standard "href getter").
func (u *URL) Href() string { return u.view(0, uint32(len(u.href))) }

// String returns Href.
func (u *URL) String() string { return u.Href() }

// Protocol returns the scheme followed by ":".
func (u *URL) Protocol() string { return u.view(0, u.schemeEnd+1) }

// Scheme returns the scheme without the ":".
func (u *URL) Scheme() string { return u.view(0, u.schemeEnd) }

// Username returns the percent-encoded username, or "".
func (u *URL) Username() string { return u.view(u.userStart, u.userEnd) }

// Password returns the percent-encoded password, or "".
func (u *URL) Password() string { return u.view(u.passStart, u.passEnd) }

// Hostname returns the serialized host without port, or "" when the host
// is null or empty. IPv6 addresses keep their brackets.
func (u *URL) Hostname() string { return u.view(u.hostStart, u.hostEnd) }

// Host returns the serialized host and, when the URL has a port, ":" and
// the port.
func (u *URL) Host() string {
	if u.host == hostNull {
		return ""
	}
	if u.port == omitted {
		return u.view(u.hostStart, u.hostEnd)
	}
	return u.view(u.hostStart, u.portEnd())
}

// portEnd is the end of the port digits: the pathname start, minus a "/."
// prefix (which only appears when the host is null, hence never with a
// port).
func (u *URL) portEnd() uint32 { return u.pathStart }

// Port returns the port in decimal, or "" when the URL has none (including
// when it equals the scheme's default port).
func (u *URL) Port() string {
	if u.port == omitted {
		return ""
	}
	return u.view(u.hostEnd+1, u.portEnd())
}

// PortNumber returns the port and true, or 0 and false when the URL has no
// port.
func (u *URL) PortNumber() (uint16, bool) {
	if u.port == omitted {
		return 0, false
	}
	return uint16(u.port), true
}

// Pathname returns the serialized path (for URLs with an opaque path, the
// opaque path).
func (u *URL) Pathname() string { return u.view(u.pathStart, u.pathEnd()) }

// Search returns "?" and the query, or "" when the query is null or empty.
func (u *URL) Search() string {
	if u.queryStart == omitted {
		return ""
	}
	end := uint32(len(u.href))
	if u.fragStart != omitted {
		end = u.fragStart
	}
	if end-u.queryStart == 1 {
		return ""
	}
	return u.view(u.queryStart, end)
}

// Query returns the query without "?" and whether the URL has one (an
// empty query is present but empty).
func (u *URL) Query() (string, bool) {
	if u.queryStart == omitted {
		return "", false
	}
	end := uint32(len(u.href))
	if u.fragStart != omitted {
		end = u.fragStart
	}
	return u.view(u.queryStart+1, end), true
}

// Hash returns "#" and the fragment, or "" when it is null or empty.
func (u *URL) Hash() string {
	if u.fragStart == omitted || int(u.fragStart)+1 == len(u.href) {
		return ""
	}
	return u.view(u.fragStart, uint32(len(u.href)))
}

// Fragment returns the fragment without "#" and whether the URL has one.
func (u *URL) Fragment() (string, bool) {
	if u.fragStart == omitted {
		return "", false
	}
	return u.view(u.fragStart+1, uint32(len(u.href))), true
}

// HasOpaquePath reports whether the URL has an opaque path (such as
// "mailto:x" or "data:..."), which the standard calls "cannot be a base".
func (u *URL) HasOpaquePath() bool { return u.opaquePath }

// HasCredentials reports whether the username or password is non-empty.
func (u *URL) HasCredentials() bool {
	return u.userEnd > u.userStart || u.passEnd > u.passStart
}

// IsSpecial reports whether the scheme is a special scheme (ftp, file,
// http, https, ws, wss).
func (u *URL) IsSpecial() bool { return u.scheme != schemeOther }

// Origin returns the ASCII serialization of the URL's origin (URL Standard
// §4.6 "origin"); "null" for an opaque origin. It allocates only for blob:
// URLs, whose origin comes from parsing their path.
func (u *URL) Origin() string {
	switch u.scheme {
	case schemeHTTP, schemeHTTPS, schemeWS, schemeWSS, schemeFTP:
		end := u.hostEnd
		if u.port != omitted {
			end = u.portEnd()
		}
		// scheme "://" host [":" port] is contiguous in href except for
		// credentials between "//" and the host.
		if u.hostStart == u.schemeEnd+3 {
			return u.view(0, end)
		}
		return u.Protocol() + "//" + u.view(u.hostStart, end)
	}
	if u.Scheme() == "blob" {
		// §4.6 step "blob": parse the path; http(s) URLs give their origin.
		p, err := Parse(u.Pathname(), nil)
		if err == nil && (p.scheme == schemeHTTP || p.scheme == schemeHTTPS) {
			return p.Origin()
		}
	}
	return "null"
}

// Clone returns a deep copy of u that shares no storage with it, in one
// allocation like Parse.
func (u *URL) Clone() *URL { return newURLFrom(&u.components, u.href) }

// MarshalText implements encoding.TextMarshaler with the href.
func (u *URL) MarshalText() ([]byte, error) { return append([]byte(nil), u.href...), nil }

// UnmarshalText implements encoding.TextUnmarshaler by parsing text without
// a base.
func (u *URL) UnmarshalText(text []byte) error { return ParseInto(u, string(text), nil) }

// portString formats p for error-free appending.
func appendPort(dst []byte, p uint32) []byte { return strconv.AppendUint(dst, uint64(p), 10) }
