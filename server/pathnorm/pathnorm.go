package pathnorm

import "errors"

// EscapedSlashes says what happens to "%2F" and "%5C" (an encoded '/' and
// '\') in a path. Many backends decode them into separators after the
// edge has matched (nginx does, for its locations), so "/pub/..%2Fadmin"
// may reach "/admin" there; others need them as they are (object stores
// whose keys hold '/').
type EscapedSlashes uint8

const (
	// Keep leaves them as sent (hex upper-cased): the default, since
	// decoding them changes which resource a backend names.
	Keep EscapedSlashes = iota
	// Reject refuses the request: Target returns ErrEscapedSlash and
	// the server answers 400.
	Reject
	// Unescape decodes "%2F" into '/' before slashes are merged and dot
	// segments removed, so the edge matches what a decoding backend
	// reads. "%5C" is kept: a raw '\' is not a valid target byte (RFC
	// 3986 §3.3), and a backend that takes '\' for '/' would read it
	// the same either way.
	Unescape
)

// Options choose the normalisation. The zero value is the default: on,
// slashes merged, escaped slashes kept.
type Options struct {
	// Off leaves targets as sent (config normalize_path: false).
	Off bool
	// KeepSlashes does not merge runs of '/' (merge_slashes: false);
	// empty segments then count as segments for "..", as in RFC 3986.
	KeepSlashes bool
	// EscapedSlashes: Keep, Reject or Unescape (escaped_slashes).
	EscapedSlashes EscapedSlashes
}

// ErrEscapedSlash: the path holds "%2F" or "%5C" and Options say Reject.
var ErrEscapedSlash = errors.New("pathnorm: escaped slash in path")

// Target normalises the path of an origin-form ("/p?q") or absolute-form
// ("http://h/p?q") target t. When nothing changes it returns t itself
// and changed false, without writing; otherwise the normalised target is
// appended to dst[:0] and returned (a caller that keeps dst between
// requests allocates only when a target is longer than any before).
// Other forms ("*", CONNECT's authority form) are returned unchanged.
func Target(dst, t []byte, o *Options) (out []byte, changed bool, err error) {
	if o.Off {
		return t, false, nil
	}
	var start, end int
	if len(t) > 0 && t[0] == '/' {
		var clean bool
		if end, clean = scan(t); clean {
			return t, false, nil
		}
	} else {
		start, end = pathSpan(t)
	}
	p := t[start:end]
	if len(p) == 0 || p[0] != '/' || Clean(p) {
		return t, false, nil
	}
	dst = append(dst[:0], t[:start]...)
	dst, err = appendPath(dst, p, o)
	if err != nil {
		return t, false, err
	}
	dst = append(dst, t[end:]...)
	if string(dst) == string(t) {
		return t, false, nil
	}
	return dst, true, nil
}

// Path normalises a path (it must start with '/'; anything else is
// returned unchanged), appending to dst[:0] when it changes. It is Target
// for a bare path: no query is looked for.
func Path(dst, p []byte, o *Options) ([]byte, error) {
	if o.Off || len(p) == 0 || p[0] != '/' || Clean(p) {
		return p, nil
	}
	return appendPath(dst[:0], p, o)
}

// Clean reports whether p needs no work: no '%', no "//" and no "/.".
// It is the whole cost of normalisation for a plain path, one pass with
// no writes. A path it calls clean is its own normal form under every
// Options (no escape to decode, no run of slashes, no dot segment).
func Clean(p []byte) bool {
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '%':
			return false
		case '/':
			if i+1 < len(p) && (p[i+1] == '/' || p[i+1] == '.') {
				return false
			}
		}
	}
	return true
}

// pathSpan is where the path of t lies: t[start:end], end at '?' (or '#',
// which the parsers refuse, but this package does not rely on that) or
// the end of t. Forms without a path give an empty span.
func pathSpan(t []byte) (start, end int) {
	if len(t) > 0 && t[0] != '/' {
		i := schemeEnd(t)
		if i < 0 {
			return len(t), len(t) // authority form or "*"
		}
		start = i
		for start < len(t) && t[start] != '/' && t[start] != '?' && t[start] != '#' {
			start++
		}
	}
	end = start
	for end < len(t) && t[end] != '?' && t[end] != '#' {
		end++
	}
	return start, end
}

// schemeEnd is the index just past "://" in an absolute-form target, or
// -1.
func schemeEnd(t []byte) int {
	for i := 0; i+3 <= len(t); i++ {
		switch t[i] {
		case ':':
			if t[i+1] == '/' && t[i+2] == '/' {
				return i + 3
			}
			return -1
		case '/', '?', '#':
			return -1
		}
	}
	return -1
}

// ErrBadEscape: a '%' in the path is not followed by two hex digits (RFC
// 3986 §2.1). nginx answers such a path 400 too. Leaving it would let the
// decoding step build an escape out of its neighbours ("%%32%65" would
// become "%2e", which a backend decodes into a dot segment the edge never
// saw).
var ErrBadEscape = errors.New("pathnorm: malformed percent-encoding in path")

// appendPath appends the normal form of p (which starts with '/') to dst.
// Step 1 (decode) writes into dst; steps 2 and 3 then work in place on
// what it wrote, since they only ever remove bytes.
func appendPath(dst, p []byte, o *Options) ([]byte, error) {
	base := len(dst)
	dst, err := decode(dst, p, o.EscapedSlashes)
	if err != nil {
		return dst, err
	}
	q := removeDots(dst[base:], !o.KeepSlashes)
	return dst[:base+len(q)], nil
}

// decode is step 1: it appends p to dst with unreserved characters
// decoded and the other escapes' hex upper-cased, "%2F" and "%5C" as esc
// says.
func decode(dst, p []byte, esc EscapedSlashes) ([]byte, error) {
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c != '%' {
			dst = append(dst, c)
			continue
		}
		if i+2 >= len(p) || unhex(p[i+1]) < 0 || unhex(p[i+2]) < 0 {
			return dst, ErrBadEscape
		}
		v := byte(unhex(p[i+1])<<4 | unhex(p[i+2]))
		i += 2
		switch {
		case unreserved(v):
			dst = append(dst, v)
			continue
		case v == '/' || v == '\\':
			if esc == Reject {
				return dst, ErrEscapedSlash
			}
			if v == '/' && esc == Unescape {
				dst = append(dst, '/')
				continue
			}
		}
		dst = append(dst, '%', upperHex[v>>4], upperHex[v&0xf])
	}
	return dst, nil
}

// removeDots removes the dot segments of q (RFC 3986 §5.2.4) and, with
// merge, its empty segments except a trailing one, in place, and returns
// the shortened q. q starts with '/'. Each kept segment is written as
// "/seg" at w, which never passes the reading position i, so copy's
// memmove is safe.
func removeDots(q []byte, merge bool) []byte {
	w := 0
	for i := 0; i < len(q); {
		j := i + 1
		for j < len(q) && q[j] != '/' {
			j++
		}
		seg := q[i+1 : j]
		last := j == len(q)
		switch {
		case len(seg) == 0 && merge && !last:
			// "//": merged into the next separator.
		case string(seg) == "." || string(seg) == "..":
			if len(seg) == 2 {
				// Pop the last output segment with its '/'; at
				// the root there is none (§5.2.4 step 2C).
				for w > 0 && q[w-1] != '/' {
					w--
				}
				if w > 0 {
					w--
				}
			}
			if last {
				// "/a/." and "/a/b/..": the result names a
				// directory, "/a/" (§5.2.4 steps 2B and 2C).
				q[w] = '/'
				w++
			}
		default:
			q[w] = '/'
			w++
			w += copy(q[w:], seg)
		}
		i = j
	}
	if w == 0 {
		q[0] = '/'
		w = 1
	}
	return q[:w]
}

// unreserved is RFC 3986 §2.3's unreserved set.
func unreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}

// unhex is the value of hex digit c, or -1.
func unhex(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c-'a') + 10
	case 'A' <= c && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

const upperHex = "0123456789ABCDEF"
