package rewrite

import (
	"bytes"
	"regexp"
	"testing"
)

// FuzzExpand feeds untrusted paths and hosts through the templates, a
// capture-taking regex and the path rewrites: nothing panics, a value never
// holds CR, LF or NUL, a URI never a space or control byte, and a rewritten
// path always starts with '/' and holds no '?' or '#'.
func FuzzExpand(f *testing.F) {
	f.Add([]byte("/api/v1/users"), []byte("example.com"), "X-{1}-{host}")
	f.Add([]byte("/api/%0d%0a/x"), []byte("h"), "{0}{path}{uri}")
	f.Add([]byte("/api/a\r\nSet-Cookie: x/"), []byte("a\x00b"), "{1}")
	f.Add([]byte(""), []byte(""), "{{{scheme}}}")
	re := regexp.MustCompile(`^/api/([^/]*)/?(.*)$`)
	strip, _ := StripPrefix("/api")
	repl, _ := ReplacePrefix("/api/", "/v2/")
	rx, _ := RegexReplace(regexp.MustCompile(`^/api/([^/]*)`), "/{1}/{host}")
	f.Fuzz(func(t *testing.T, path, host []byte, tmpl string) {
		tm, err := ParseTemplate(tmpl)
		if err != nil {
			return
		}
		e := &Env{Host: host, Path: path, Query: path, HasQuery: true, RemoteAddr: host, Scheme: []byte("http")}
		if re.Match(path) {
			e.Caps, e.CapSrc = re.FindSubmatchIndex(path), path
		}
		if v, err := tm.AppendValue(nil, e); err == nil && bytes.ContainsAny(v, "\r\n\x00") {
			t.Fatalf("value %q", v)
		}
		if u, err := tm.AppendURI(nil, e); err == nil {
			for _, c := range u {
				if c <= ' ' || c == 0x7f {
					t.Fatalf("uri %q", u)
				}
			}
		}
		if len(path) == 0 || path[0] != '/' || bytes.ContainsAny(path, "?# \r\n\x00") {
			return // the parser hands the router no such path
		}
		for _, p := range []*PathRewrite{strip, repl, rx} {
			out, ok, err := p.Append(nil, path, e)
			if err != nil || !ok {
				continue
			}
			if len(out) == 0 || out[0] != '/' || bytes.ContainsAny(out, "?# \r\n\x00") {
				t.Fatalf("path %q -> %q", path, out)
			}
		}
	})
}
