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

// isHostByte reports whether b may appear in a Host field value:
// uri-host [ ":" port ] (RFC 9110 §7.2), where uri-host is an IP literal in
// brackets, an IPv4 address or a reg-name of unreserved, pct-encoded and
// sub-delims characters. Excluding "/", "?", "#", "@" and "\" keeps a Host
// value from moving the path or adding userinfo when it is joined with the
// target.
func isHostByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' ||
		b < 0x80 && containsByte("-._~%!$&'()*+,;=:[]", b)
}

func containsByte(s string, b byte) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == b {
			return true
		}
	}
	return false
}

var hostSet = newByteSet(isHostByte)

// ValidHost reports whether h is a syntactically acceptable Host field
// value: non-empty and made of uri-host and port characters only.
func ValidHost(h []byte) bool {
	if len(h) == 0 {
		return false
	}
	for _, b := range h {
		if !hostSet[b] {
			return false
		}
	}
	return true
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
