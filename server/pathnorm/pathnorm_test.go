package pathnorm

import (
	"testing"
)

func TestTarget(t *testing.T) {
	keep, noMerge := &Options{}, &Options{KeepSlashes: true}
	reject, unesc := &Options{EscapedSlashes: Reject}, &Options{EscapedSlashes: Unescape}
	for _, c := range []struct {
		in, want string
		o        *Options
		err      error
	}{
		// The attacks of issue 27, item 4.
		{"/pub/../admin/x", "/admin/x", keep, nil},
		{"//admin/x", "/admin/x", keep, nil},
		{"/%61dmin/x", "/admin/x", keep, nil},
		{"/pub/%2e%2e/admin/x", "/admin/x", keep, nil},
		{"/pub/%2E%2e/admin/x", "/admin/x", keep, nil},
		{"/pub/.%2E/admin/x?a=/../b", "/admin/x?a=/../b", keep, nil},
		// Plain paths and forms without a path are returned as they are.
		{"/", "/", keep, nil},
		{"/a/b.c/d?x=%zz//..", "/a/b.c/d?x=%zz//..", keep, nil},
		{"*", "*", keep, nil},
		{"example.com:443", "example.com:443", keep, nil},
		{"http://h", "http://h", keep, nil},
		{"http://h/a/../b?q", "http://h/b?q", keep, nil},
		{"http://h//..//b", "http://h/b", keep, nil},
		// Dot segments (RFC 3986 §5.2.4 and its §5.4 examples).
		{"/a/b/c/./../../g", "/a/g", keep, nil},
		{"/..", "/", keep, nil},
		{"/../a", "/a", keep, nil},
		{"/.", "/", keep, nil},
		{"/a/.", "/a/", keep, nil},
		{"/a/b/..", "/a/", keep, nil},
		{"/a/.b/..c/", "/a/.b/..c/", keep, nil},
		{"/a/./", "/a/", keep, nil},
		// Slashes: merged first (as nginx and path.Clean), or kept.
		{"/a//../b", "/b", keep, nil},
		{"/a//../b", "/a/b", noMerge, nil},
		{"/a//b//", "/a/b/", keep, nil},
		{"/a//b//", "/a//b//", noMerge, nil},
		{"//", "/", keep, nil},
		// Escapes: unreserved decoded, the others upper-cased.
		{"/%7e%41%2D%5f%2e", "/~A-_.", keep, nil},
		{"/a%3ab%20", "/a%3Ab%20", keep, nil},
		{"/a%25%32%65", "/a%252e", keep, nil},
		{"/a%", "", keep, ErrBadEscape},
		{"/a%4", "", keep, ErrBadEscape},
		{"/a%zz", "", keep, ErrBadEscape},
		{"/%%32%65%%32%65/admin", "", keep, ErrBadEscape},
		// Escaped slashes.
		{"/pub/..%2fadmin", "/pub/..%2Fadmin", keep, nil},
		{"/pub/..%5cadmin", "/pub/..%5Cadmin", keep, nil},
		{"/pub/..%2Fadmin", "", reject, ErrEscapedSlash},
		{"/pub/..%5Cadmin", "", reject, ErrEscapedSlash},
		{"/pub/..%2Fadmin", "/admin", unesc, nil},
		{"/pub/..%5cadmin", "/pub/..%5Cadmin", unesc, nil},
		// Off.
		{"/pub/../admin", "/pub/../admin", &Options{Off: true}, nil},
	} {
		out, changed, err := Target(nil, []byte(c.in), c.o)
		if err != c.err {
			t.Errorf("Target(%q, %+v): err %v, want %v", c.in, *c.o, err, c.err)
			continue
		}
		if err != nil {
			continue
		}
		if string(out) != c.want || changed != (c.in != c.want) {
			t.Errorf("Target(%q, %+v) = %q, %v; want %q", c.in, *c.o, out, changed, c.want)
		}
	}
}

// TestCleanIsNormal checks Clean's promise: a path it passes is its own
// normal form under every Options.
func TestCleanIsNormal(t *testing.T) {
	for _, p := range []string{"/", "/a", "/a/b/", "/a.b/c..", "/a/b~c"} {
		if !Clean([]byte(p)) {
			t.Fatalf("Clean(%q) = false", p)
		}
		for _, o := range allOptions {
			if out, err := appendPath(nil, []byte(p), &o); err != nil || string(out) != p {
				t.Errorf("appendPath(%q, %+v) = %q, %v", p, o, out, err)
			}
		}
	}
}

var allOptions = []Options{
	{}, {KeepSlashes: true}, {EscapedSlashes: Reject}, {EscapedSlashes: Unescape},
	{KeepSlashes: true, EscapedSlashes: Unescape}, {KeepSlashes: true, EscapedSlashes: Reject},
}

// TestZeroAlloc: a plain target costs no allocation, and a dirty one none
// once dst has grown.
func TestZeroAlloc(t *testing.T) {
	dst := make([]byte, 0, 64)
	plain, dirty := []byte("/api/v1/users?id=7"), []byte("/api//v1/./%75sers/../users?id=7")
	o := &Options{}
	if n := testing.AllocsPerRun(100, func() {
		Target(dst, plain, o)
		Target(dst, dirty, o)
	}); n != 0 {
		t.Fatalf("%v allocations per run, want 0", n)
	}
}
