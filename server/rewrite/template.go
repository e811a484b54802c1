package rewrite

import (
	"errors"
	"strconv"
)

// Var names what a template variable expands to.
type Var uint8

// The variables. Their values come from the Env a caller fills per request.
const (
	varLiteral    Var = iota
	VarRemoteAddr     // {remote_addr}: the peer's IP address, as the transport reports it
	VarClientIP       // {client_ip}: the client's IP address (trusted_proxies decide it)
	VarHost           // {host}: the request's host, without port or trailing dot
	VarScheme         // {scheme}: "https" on TLS connections, else "http"
	VarRequestID      // {request_id}: the request's ID
	VarPath           // {path}: the path, after the route's path rewrite
	VarQuery          // {query}: the query string without '?', empty if none
	VarURI            // {uri}: the path and, if the target has one, '?' and the query
	VarCapture        // {N}: capture group N of the route's path_regex ({0} is the whole match)
)

var varNames = map[string]Var{
	"remote_addr": VarRemoteAddr,
	"client_ip":   VarClientIP,
	"host":        VarHost,
	"scheme":      VarScheme,
	"request_id":  VarRequestID,
	"path":        VarPath,
	"query":       VarQuery,
	"uri":         VarURI,
}

// maxCaptureIndex bounds {N}: RE2 allows up to 1000 groups, but a
// template naming more than this is a typo, not a route.
const maxCaptureIndex = 99

var (
	ErrUnknownVar = errors.New("rewrite: unknown variable (known: {remote_addr} {client_ip} {host} {scheme} {request_id} {path} {query} {uri} and captures {0}..{99}; write {{ for a literal brace)")
	ErrUnclosed   = errors.New("rewrite: '{' without '}' (write {{ for a literal brace)")
	ErrLiteral    = errors.New("rewrite: control characters are not allowed in a template")
	ErrCapture    = errors.New("rewrite: capture group out of range of the regex")
	ErrNoRegex    = errors.New("rewrite: captures need a regex (match.path_regex)")
	// ErrUnsafe: an expansion would put bytes in a field value or a target
	// that break its syntax (CR, LF, NUL...). The request is refused.
	ErrUnsafe = errors.New("rewrite: expanded value holds forbidden bytes")
)

// Template is a parsed value with variables, e.g. "https://{host}{uri}".
// It is immutable and safe for concurrent use.
type Template struct {
	src   string
	parts []part
	ncap  int // highest {N} + 1, 0 if none (so the zero Template has none)
}

type part struct {
	v   Var
	lit string // varLiteral
	n   int    // VarCapture
}

// ParseTemplate parses s. "{{" is a literal '{'; a '}' alone is literal.
// Literal text may not hold control characters other than HTAB.
func ParseTemplate(s string) (Template, error) {
	t := Template{src: s}
	lit := make([]byte, 0, len(s))
	flush := func() {
		if len(lit) > 0 {
			t.parts = append(t.parts, part{lit: string(lit)})
			lit = lit[:0]
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '{' {
			if !valueByte(c) {
				return Template{}, ErrLiteral
			}
			lit = append(lit, c)
			continue
		}
		if i+1 < len(s) && s[i+1] == '{' {
			lit = append(lit, '{')
			i++
			continue
		}
		end := i + 1
		for end < len(s) && s[end] != '}' {
			end++
		}
		if end == len(s) {
			return Template{}, ErrUnclosed
		}
		name := s[i+1 : end]
		flush()
		if v, ok := varNames[name]; ok {
			t.parts = append(t.parts, part{v: v})
		} else if n, err := strconv.Atoi(name); err == nil && n >= 0 && n <= maxCaptureIndex && name == strconv.Itoa(n) {
			t.parts = append(t.parts, part{v: VarCapture, n: n})
			t.ncap = max(t.ncap, n+1)
		} else {
			return Template{}, ErrUnknownVar
		}
		i = end
	}
	flush()
	return t, nil
}

// MustTemplate is ParseTemplate for constants (tests, built-in values); it
// panics on error.
func MustTemplate(s string) Template {
	t, err := ParseTemplate(s)
	if err != nil {
		panic(err)
	}
	return t
}

// String returns the template as written.
func (t *Template) String() string { return t.src }

// MaxCapture is the highest capture group the template names, -1 if none.
func (t *Template) MaxCapture() int { return t.ncap - 1 }

// CheckCaptures reports whether a regex with groups capture groups (-1:
// no regex) provides every {N} the template names.
func (t *Template) CheckCaptures(groups int) error {
	switch {
	case t.ncap == 0:
		return nil
	case groups < 0:
		return ErrNoRegex
	case t.ncap-1 > groups:
		return ErrCapture
	}
	return nil
}

// Uses reports whether the template names v.
func (t *Template) Uses(v Var) bool {
	for _, p := range t.parts {
		if p.v == v {
			return true
		}
	}
	return false
}

// Env is what the variables of one request expand to. Every slice is a
// view the caller owns; nothing is kept after an Append returns.
type Env struct {
	RemoteAddr, ClientIP, Host, Scheme, RequestID []byte
	Path, Query                                   []byte
	// HasQuery: the target has a '?' (Query may be empty).
	HasQuery bool
	// Caps are regexp submatch indices (pairs, -1 for a group that did
	// not take part) into CapSrc.
	Caps   []int
	CapSrc []byte
}

// Capture returns group n, empty when it did not take part.
func (e *Env) Capture(n int) []byte {
	if 2*n+1 >= len(e.Caps) || e.Caps[2*n] < 0 {
		return nil
	}
	return e.CapSrc[e.Caps[2*n]:e.Caps[2*n+1]]
}

// Append expands t for e onto dst, without checks.
func (t *Template) Append(dst []byte, e *Env) []byte {
	for i := range t.parts {
		p := &t.parts[i]
		switch p.v {
		case varLiteral:
			dst = append(dst, p.lit...)
		case VarRemoteAddr:
			dst = append(dst, e.RemoteAddr...)
		case VarClientIP:
			dst = append(dst, e.ClientIP...)
		case VarHost:
			dst = append(dst, e.Host...)
		case VarScheme:
			dst = append(dst, e.Scheme...)
		case VarRequestID:
			dst = append(dst, e.RequestID...)
		case VarPath:
			dst = append(dst, e.Path...)
		case VarQuery:
			dst = append(dst, e.Query...)
		case VarURI:
			dst = append(dst, e.Path...)
			if e.HasQuery {
				dst = append(dst, '?')
				dst = append(dst, e.Query...)
			}
		case VarCapture:
			dst = append(dst, e.Capture(p.n)...)
		}
	}
	return dst
}

// AppendValue expands t as a field value (RFC 9110 §5.5): it fails with
// ErrUnsafe, and returns dst as it was, if the value would hold a control
// byte other than HTAB, or DEL. Leading and trailing whitespace is kept.
func (t *Template) AppendValue(dst []byte, e *Env) ([]byte, error) {
	n := len(dst)
	dst = t.Append(dst, e)
	for _, c := range dst[n:] {
		if !valueByte(c) {
			return dst[:n], ErrUnsafe
		}
	}
	return dst, nil
}

// AppendURI expands t as a URI reference (a Location, a request target):
// it fails with ErrUnsafe, and returns dst as it was, unless every byte is
// visible ASCII or obs-text (no space, no control byte, no DEL).
func (t *Template) AppendURI(dst []byte, e *Env) ([]byte, error) {
	n := len(dst)
	dst = t.Append(dst, e)
	if !uriBytes(dst[n:]) {
		return dst[:n], ErrUnsafe
	}
	return dst, nil
}

// valueByte: a byte allowed in a field value (field-vchar, SP, HTAB,
// obs-text; RFC 9110 §5.5).
func valueByte(c byte) bool { return c >= 0x20 && c != 0x7f || c == '\t' }

func uriBytes(b []byte) bool {
	for _, c := range b {
		if c <= 0x20 || c == 0x7f {
			return false
		}
	}
	return true
}
