package rewrite

import (
	"errors"
	"regexp"
	"strings"
)

// PathRewrite changes a request's path; the query string is kept as it
// is. It is immutable and safe for concurrent use.
type PathRewrite struct {
	kind     pathKind
	from, to string         // prefixes
	re       *regexp.Regexp // pathRegex
	tmpl     Template       // pathRegex: the replacement
}

type pathKind uint8

const (
	pathStrip pathKind = iota + 1
	pathReplace
	pathRegex
)

var (
	ErrPrefix   = errors.New("rewrite: a prefix must start with '/' and hold only visible ASCII, without '?' or '#'")
	ErrPathTo   = errors.New("rewrite: a path replacement may not hold spaces, control bytes, '?' or '#'")
	ErrEmptyReg = errors.New("rewrite: the regex is empty")
)

// StripPrefix removes prefix from paths that start with it (byte-wise, as
// match.path_prefix compares): "/api/users" becomes "/users"; a path left
// empty or without a leading '/' gets one ("/api" and "/apix" become "/"
// and "/x").
func StripPrefix(prefix string) (*PathRewrite, error) {
	if !validPrefix(prefix) {
		return nil, ErrPrefix
	}
	return &PathRewrite{kind: pathStrip, from: prefix}, nil
}

// ReplacePrefix replaces from by to in paths that start with from,
// byte-wise: from "/a/" to "/b/" turns "/a/x" into "/b/x", and from "/a/"
// to "/b" turns it into "/bx" (write both with or both without the '/').
func ReplacePrefix(from, to string) (*PathRewrite, error) {
	if !validPrefix(from) || !validPrefix(to) {
		return nil, ErrPrefix
	}
	return &PathRewrite{kind: pathReplace, from: from, to: to}, nil
}

// RegexReplace replaces the first (leftmost) match of re in the path with
// to, where {N} is re's capture group N and the other variables are the
// request's; anchor re ("^/old/(.*)$") to replace the whole path. A path
// re does not match is kept. The regex is RE2 syntax (package regexp).
func RegexReplace(re *regexp.Regexp, to string) (*PathRewrite, error) {
	if re == nil || re.String() == "" {
		return nil, ErrEmptyReg
	}
	t, err := ParseTemplate(to)
	if err != nil {
		return nil, err
	}
	if err := t.CheckCaptures(re.NumSubexp()); err != nil {
		return nil, err
	}
	for _, p := range t.parts {
		if p.v == varLiteral && (strings.ContainsAny(p.lit, "?# \t") || !uriBytes([]byte(p.lit))) {
			return nil, ErrPathTo
		}
		if p.v == VarQuery || p.v == VarURI {
			return nil, ErrPathTo // the query is kept as it is: never inside the path
		}
	}
	return &PathRewrite{kind: pathRegex, re: re, tmpl: t}, nil
}

func validPrefix(p string) bool {
	return len(p) > 0 && p[0] == '/' && !strings.ContainsAny(p, "?#") && uriBytes([]byte(p))
}

// Append appends the rewritten path of path to dst and reports whether
// the rewrite applied. e supplies the variables of a regex replacement
// (its Caps are replaced by the rewrite regex's own). The result starts
// with '/' and holds no space, control byte, '?' or '#': an expansion
// that would fails with ErrUnsafe (dst returned as it was).
func (p *PathRewrite) Append(dst, path []byte, e *Env) ([]byte, bool, error) {
	n := len(dst)
	switch p.kind {
	case pathStrip, pathReplace:
		if len(path) < len(p.from) || string(path[:len(p.from)]) != p.from {
			return dst, false, nil
		}
		rest := path[len(p.from):]
		if p.kind == pathReplace {
			dst = append(dst, p.to...) // byte-wise, as nginx's proxy_pass URI
		} else if len(rest) == 0 || rest[0] != '/' {
			dst = append(dst, '/')
		}
		return append(dst, rest...), true, nil
	case pathRegex:
		idx := p.re.FindSubmatchIndex(path)
		if idx == nil {
			return dst, false, nil
		}
		local := *e
		local.Caps, local.CapSrc = idx, path
		if idx[0] == 0 {
			// The replacement starts the path: it must supply the '/'.
			dst = append(dst, '/')
		} else {
			dst = append(dst, path[:idx[0]]...)
		}
		m := len(dst)
		dst = p.tmpl.Append(dst, &local)
		if idx[0] == 0 && len(dst) > m && dst[m] == '/' {
			dst = append(dst[:m-1], dst[m:]...) // it did
		}
		dst = append(dst, path[idx[1]:]...)
		if !targetPath(dst[n:]) {
			return dst[:n], false, ErrUnsafe
		}
		return dst, true, nil
	}
	return dst, false, nil
}

// targetPath: a path that can stand in an origin-form target: a leading
// '/', and no space, control byte, DEL, '?' or '#'.
func targetPath(b []byte) bool {
	if len(b) == 0 || b[0] != '/' {
		return false
	}
	for _, c := range b {
		if c <= 0x20 || c == 0x7f || c == '?' || c == '#' {
			return false
		}
	}
	return true
}
