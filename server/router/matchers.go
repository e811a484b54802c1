package router

import (
	"errors"
	"regexp"

	"github.com/simdedge/simdedge/internal/ascii"
	phttp "github.com/simdedge/simdedge/parse/http"
	"github.com/simdedge/simdedge/server"
)

// The matchers beyond host, path and method (issue 23): a path regex,
// header fields and query parameters. A route that uses none of them
// pays one nil check per Lookup for all three.

// HeaderMatchKind says how a HeaderMatch compares a field's value.
type HeaderMatchKind uint8

const (
	// HeaderExact: the value equals Value (case-sensitive; the parser
	// has trimmed the whitespace around it).
	HeaderExact HeaderMatchKind = iota
	// HeaderPrefix: the value starts with Value.
	HeaderPrefix
	// HeaderRegex: Regex matches the value (RE2, unanchored: write ^ and
	// $ to match it whole).
	HeaderRegex
	// HeaderPresent: a field of that name exists, whatever its value.
	HeaderPresent
	// HeaderAbsent: no field of that name exists.
	HeaderAbsent
)

// HeaderMatch accepts a request when one of its fields named Name (ASCII
// case-insensitive; each field line on its own, repeated fields are not
// joined) matches, or for HeaderAbsent when none is named Name.
type HeaderMatch struct {
	Name  string
	Kind  HeaderMatchKind
	Value string
	Regex *regexp.Regexp
}

// QueryMatch accepts a request when one of its query parameters (the
// target's query split at '&', each at its first '=') has the name Name
// and the value Value, both compared after the
// application/x-www-form-urlencoded decoding that browsers apply ('+' is
// a space, %XX a byte; a '%' without two hex digits stands for itself),
// so "?debug=%31" matches {debug: "1"}. A repeated parameter matches if
// any of its occurrences does. A parameter without '=' has the empty
// value.
type QueryMatch struct {
	Name, Value string
}

var (
	ErrBadHeaderMatch = errors.New("router: header match needs a token name (and a regex for HeaderRegex)")
	ErrBadQueryMatch  = errors.New("router: query match needs a parameter name")
)

// extraMatch is the compiled form of a Match's PathRegex, Headers and
// Query; nil when the route has none.
type extraMatch struct {
	re      *regexp.Regexp
	headers []HeaderMatch
	query   []QueryMatch
}

func compileExtra(m *Match) (*extraMatch, error) {
	if m.PathRegex == nil && len(m.Headers) == 0 && len(m.Query) == 0 {
		return nil, nil
	}
	for _, h := range m.Headers {
		if !ascii.IsToken(h.Name) || h.Kind == HeaderRegex && h.Regex == nil || h.Kind > HeaderAbsent {
			return nil, ErrBadHeaderMatch
		}
	}
	for _, q := range m.Query {
		if q.Name == "" {
			return nil, ErrBadQueryMatch
		}
	}
	return &extraMatch{re: m.PathRegex, headers: m.Headers, query: m.Query}, nil
}

func (x *extraMatch) accepts(r *server.Request, path []byte) bool {
	if x.re != nil && !x.re.Match(path) {
		return false
	}
	for i := range x.headers {
		if !x.headers[i].accepts(r.Headers()) {
			return false
		}
	}
	if len(x.query) > 0 {
		q, _ := queryOf(r.Target())
		for i := range x.query {
			if !x.query[i].accepts(q) {
				return false
			}
		}
	}
	return true
}

func (h *HeaderMatch) accepts(hs phttp.Headers) bool {
	found := false
	for i := hs.Index(h.Name, 0); i >= 0; i = hs.Index(h.Name, i+1) {
		v := hs[i].Value
		found = true
		switch h.Kind {
		case HeaderExact:
			if string(v) == h.Value {
				return true
			}
		case HeaderPrefix:
			if len(v) >= len(h.Value) && string(v[:len(h.Value)]) == h.Value {
				return true
			}
		case HeaderRegex:
			if h.Regex.Match(v) {
				return true
			}
		case HeaderPresent:
			return true
		case HeaderAbsent:
			return false
		}
	}
	return !found && h.Kind == HeaderAbsent
}

func (q *QueryMatch) accepts(query []byte) bool {
	for len(query) > 0 {
		end := 0
		for end < len(query) && query[end] != '&' {
			end++
		}
		pair := query[:end]
		eq := 0
		for eq < len(pair) && pair[eq] != '=' {
			eq++
		}
		var value []byte
		if eq < len(pair) {
			value = pair[eq+1:]
		}
		if formEqual(pair[:eq], q.Name) && formEqual(value, q.Value) {
			return true
		}
		if end == len(query) {
			break
		}
		query = query[end+1:]
	}
	return false
}

// formEqual compares the form-urlencoded decoding of b with s, without
// decoding into a buffer.
func formEqual(b []byte, s string) bool {
	j := 0
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case c == '+':
			c = ' '
		case c == '%' && i+2 < len(b) && isHex(b[i+1]) && isHex(b[i+2]):
			c = unhex(b[i+1])<<4 | unhex(b[i+2])
			i += 2
		}
		if j == len(s) || s[j] != c {
			return false
		}
		j++
	}
	return j == len(s)
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

func unhex(c byte) byte {
	switch {
	case c >= 'a':
		return c - 'a' + 10
	case c >= 'A':
		return c - 'A' + 10
	}
	return c - '0'
}

// queryOf is the query of a target (after its first '?'), and whether
// it has one.
func queryOf(t []byte) ([]byte, bool) {
	for i, c := range t {
		if c == '?' {
			return t[i+1:], true
		}
	}
	return nil, false
}
