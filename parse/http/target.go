package http

import (
	"github.com/simdedge/simdedge/parse/url"
)

// TargetForm is the form of a request-target (RFC 9112 §3.2).
type TargetForm uint8

const (
	// OriginForm: absolute-path [ "?" query ], as in "GET /a?b".
	OriginForm TargetForm = iota
	// AbsoluteForm: an absolute URI, sent to proxies.
	AbsoluteForm
	// AuthorityForm: host:port, only for CONNECT.
	AuthorityForm
	// AsteriskForm: "*", only for a server-wide OPTIONS.
	AsteriskForm
)

// TargetForm classifies r.Target by the rules of RFC 9112 §3.2: "*" with
// OPTIONS, any target of CONNECT, a leading "/", and otherwise a URI with
// a scheme. It does not validate; ResolveTarget does.
func (r *Request) TargetForm() TargetForm {
	switch {
	case string(r.Method) == "CONNECT":
		return AuthorityForm
	case len(r.Target) > 0 && r.Target[0] == '/':
		return OriginForm
	case string(r.Target) == "*":
		return AsteriskForm
	}
	return AbsoluteForm
}

func containsByte(s string, b byte) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == b {
			return true
		}
	}
	return false
}

// regNameSet: RFC 3986 reg-name bytes (unreserved, "%" of pct-encoded,
// sub-delims). ipLiteralSet: what may stand between the brackets of an
// IPv6 or IPvFuture literal (hex digits, ":", ".", "v", unreserved,
// sub-delims).
var (
	regNameSet   = newByteSet(isRegNameByte)
	ipLiteralSet = newByteSet(func(b byte) bool { return isRegNameByte(b) && b != '%' || b == ':' })
)

func isRegNameByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' ||
		containsByte("-._~%!$&'()*+,;=", b)
}

// ValidHost reports whether h is a syntactically valid Host field value or
// authority-form target: uri-host [ ":" port ] (RFC 9110 §7.2, RFC 3986
// §3.2.2-3.2.3), where uri-host is an IP-literal in brackets or a reg-name
// (unreserved, percent-encoded and sub-delimiter bytes, which include
// dotted IPv4), and port is digits. User information, a second colon
// outside brackets and a non-numeric port are rejected: each lets two
// parsers disagree on which host a request is for.
func ValidHost(h []byte) bool {
	if len(h) == 0 {
		return false
	}
	if h[0] == '[' {
		end := indexByte(h, ']')
		if end < 2 {
			return false
		}
		for _, b := range h[1:end] {
			if !ipLiteralSet[b] {
				return false
			}
		}
		return validPort(h[end+1:])
	}
	// One pass: reg-name bytes up to the first other byte, which may
	// only be the colon before an all-digit port. (The port check after
	// the first colon rejects a second colon, as "host is everything up
	// to the last colon, and holds no colon" would.) Four bytes a step
	// while all four are reg-name bytes: one branch instead of four.
	//
	// The four bytes come from a slice of exactly four, so that one
	// bounds check covers them (indexing h at i+1, i+2 and i+3 cost a
	// compare and a branch each: BenchmarkPhases frame, 13.2 against
	// 12.4 cpu-ns, AMD EPYC Zen 4, Go 1.26).
	i := 0
	for ; i+4 <= len(h); i += 4 {
		q := h[i : i+4 : i+4]
		if regNameBit[q[0]]&regNameBit[q[1]]&regNameBit[q[2]]&regNameBit[q[3]] == 0 {
			break
		}
	}
	for ; i < len(h); i++ {
		if b := h[i]; !regNameSet[b] {
			return b == ':' && i > 0 && allDigits(h[i+1:])
		}
	}
	return true
}

// regNameBit is regNameSet as 0 and 1, for ValidHost's four-byte test.
var regNameBit = func() (t [256]uint8) {
	for i, in := range regNameSet {
		if in {
			t[i] = 1
		}
	}
	return t
}()

// validPort accepts what may follow an IP-literal: nothing, or ":" digits.
func validPort(p []byte) bool {
	return len(p) == 0 || p[0] == ':' && allDigits(p[1:])
}

func allDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func indexByte(b []byte, c byte) int {
	for i, x := range b {
		if x == c {
			return i
		}
	}
	return -1
}

// validAuthority checks the authority of an absolute-form target (RFC 9112
// §3.2.2), the part after "scheme://" up to the path, query or fragment:
// it must be a valid host (ValidHost) without user information (RFC 9110
// §4.2.4 tells recipients to treat userinfo as an error). "http" and
// "https" targets must have a non-empty authority (§4.2.1); a target
// without "//" has none to check.
func validAuthority(scheme, rest []byte) bool {
	if len(rest) < 2 || rest[0] != '/' || rest[1] != '/' {
		return !isHTTPScheme(scheme)
	}
	a := rest[2:]
	for i, b := range a {
		if b == '/' || b == '?' || b == '#' {
			a = a[:i]
			break
		}
	}
	if len(a) == 0 {
		return !isHTTPScheme(scheme)
	}
	return ValidHost(a)
}

func isHTTPScheme(s []byte) bool {
	return len(s) == 4 && EqualFold(s, "http") || len(s) == 5 && EqualFold(s, "https")
}

// ResolveTarget reconstructs the target URI of r (RFC 9112 §3.3) and parses
// it with parse/url into dst, reusing dst's buffers:
//
//   - origin-form and asterisk-form: scheme "://" Host target, where
//     scheme is the one the connection was received on ("http" or
//     "https") and Host must pass ValidHost (asterisk-form yields the
//     authority with an empty path);
//   - absolute-form: the target itself (its authority wins over Host);
//   - authority-form (CONNECT): scheme "://" target.
//
// It returns ErrInvalidTarget when the target does not fit its method's
// form, ErrInvalidHost for a missing or malformed Host, or parse/url's
// error (a *url.Error, which does not echo input). Once r's scratch buffer
// and dst have grown, it allocates nothing.
func (r *Request) ResolveTarget(dst *url.URL, scheme string) error {
	form := r.TargetForm()
	if form == AbsoluteForm {
		return url.ParseInto(dst, bytesString(r.Target), nil)
	}
	b := append(r.urlBuf[:0], scheme...)
	b = append(b, "://"...)
	switch form {
	case AuthorityForm:
		if !ValidHost(r.Target) {
			return ErrInvalidTarget
		}
		b = append(b, r.Target...)
	case AsteriskForm:
		if string(r.Method) != "OPTIONS" {
			return ErrInvalidTarget
		}
		if !ValidHost(r.Host) {
			return ErrInvalidHost
		}
		b = append(b, r.Host...)
	default:
		if !ValidHost(r.Host) {
			return ErrInvalidHost
		}
		b = append(b, r.Host...)
		b = append(b, r.Target...)
	}
	r.urlBuf = b
	// dst copies what it keeps (its href buffer); only an error it
	// returns still refers to the input, and it is documented to live
	// until the next ParseInto on dst.
	return url.ParseInto(dst, bytesString(b), nil)
}
