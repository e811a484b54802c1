package upstream

import (
	"bytes"
	"errors"
	"strings"

	"github.com/simdedge/simdedge/internal/ascii"
)

// KeySource is what hash-key extraction reads from a request. The
// engines' request type (server.Request) satisfies it; views it returns
// need only live until Key's result has been hashed.
type KeySource interface {
	// Header returns the first field named name (case-insensitive).
	Header(name string) ([]byte, bool)
	// Target is the request target as sent (origin or absolute form).
	Target() []byte
	// RemoteIP is the client's address in text form, nil if none.
	RemoteIP() []byte
}

// Hash key kinds.
const (
	keyNone = iota
	keyHeader
	keyCookie
	keyQuery
	keyClientIP
	keyPath
)

// HashKey names the part of a request that consistent hashing hashes. The
// zero value names nothing.
type HashKey struct {
	kind int
	name string
	text string
}

// ErrHashKey is ParseHashKey's error.
var ErrHashKey = errors.New(`upstream: hash key must be "header:NAME", "cookie:NAME", "query:NAME", "client_ip" or "path"`)

// ParseHashKey parses a hash key: "header:NAME", "cookie:NAME",
// "query:NAME", "client_ip" or "path".
func ParseHashKey(s string) (HashKey, error) {
	switch s {
	case "client_ip":
		return HashKey{kind: keyClientIP, text: s}, nil
	case "path":
		return HashKey{kind: keyPath, text: s}, nil
	}
	kind, name, ok := strings.Cut(s, ":")
	// A token (RFC 9110 §5.6.2) also covers cookie names (RFC 6265
	// §4.1.1) and the query parameter names worth hashing on.
	if !ok || !ascii.IsToken(name) {
		return HashKey{}, ErrHashKey
	}
	k := HashKey{name: name, text: s}
	switch kind {
	case "header":
		k.kind = keyHeader
	case "cookie":
		k.kind = keyCookie
	case "query":
		k.kind = keyQuery
	default:
		return HashKey{}, ErrHashKey
	}
	return k, nil
}

// String is the key as configured.
func (k HashKey) String() string { return k.text }

// IsZero reports whether k names nothing.
func (k HashKey) IsZero() bool { return k.kind == keyNone }

// Extract returns the key's bytes in r, or nil when r has none (the field,
// cookie or parameter is absent): a view into r's buffers. Query values
// are hashed as sent, not percent-decoded, which needs no copy and keeps
// "a%20b" and "a+b" apart as the origin would see them. It allocates
// nothing.
func (k HashKey) Extract(r KeySource) []byte {
	switch k.kind {
	case keyHeader:
		v, _ := r.Header(k.name)
		return v
	case keyCookie:
		v, ok := r.Header("Cookie")
		if !ok {
			return nil
		}
		return cookie(v, k.name)
	case keyQuery:
		_, q, ok := bytes.Cut(r.Target(), []byte{'?'})
		if !ok {
			return nil
		}
		return param(q, k.name)
	case keyClientIP:
		return r.RemoteIP()
	case keyPath:
		return path(r.Target())
	}
	return nil
}

// Key extracts the pool's hash key from r (nil for pools that do not
// hash, or requests without the key).
func (p *Pool) Key(r KeySource) []byte {
	if p.opts.Balance != Hash {
		return nil
	}
	return p.opts.HashKey.Extract(r)
}

// cookie finds name's value in a Cookie field ("a=1; b=2", RFC 6265
// §5.4: one field, pairs separated by "; ").
func cookie(v []byte, name string) []byte {
	for len(v) > 0 {
		var pair []byte
		pair, v, _ = bytes.Cut(v, []byte{';'})
		pair = bytes.TrimLeft(pair, " \t")
		n, val, ok := bytes.Cut(pair, []byte{'='})
		if ok && string(n) == name {
			return bytes.TrimRight(val, " \t")
		}
	}
	return nil
}

// param finds name's value in a query ("a=1&b=2"); a bare "name" has an
// empty value.
func param(q []byte, name string) []byte {
	q, _, _ = bytes.Cut(q, []byte{'#'})
	for len(q) > 0 {
		var pair []byte
		pair, q, _ = bytes.Cut(q, []byte{'&'})
		n, val, _ := bytes.Cut(pair, []byte{'='})
		if string(n) == name {
			if val == nil {
				return pair[len(pair):] // present, empty: not nil
			}
			return val
		}
	}
	return nil
}

// path is the target's path: without the query, and without the scheme
// and authority of an absolute-form target.
func path(t []byte) []byte {
	if i := bytes.Index(t, []byte("://")); i > 0 && t[0] != '/' {
		t = t[i+3:]
		j := bytes.IndexAny(t, "/?")
		if j < 0 || t[j] == '?' {
			return rootPath // "http://h" and "http://h?q" ask for "/"
		}
		t = t[j:]
	}
	p, _, _ := bytes.Cut(t, []byte{'?'})
	return p
}

var rootPath = []byte("/")
