package pathnorm

import (
	"bytes"
	"net/url"
	"path"
	"strings"
	"testing"
)

// FuzzPath checks the normaliser against independent references and its
// own invariants, under every Options:
//   - against path.Clean, on paths without '%' and with slashes merged;
//   - against refRemoveDots (RFC 3986 §5.2.4 written as the RFC's buffer
//     steps), with slashes kept;
//   - its decoding step against url.PathUnescape;
//   - idempotent, never longer than its input, starting with '/', no dot
//     segment, no "//" when merging, only valid upper-case escapes left.
func FuzzPath(f *testing.F) {
	for _, s := range []string{
		"/", "/pub/../admin/x", "//admin/x", "/%61dmin/x", "/pub/%2e%2e/admin/x",
		"/a/b/c/./../../g", "/a//../b/", "/%2F/%5c/%zz", "/a%25%32%65", "/.%2e/", "/a/b?x/../y",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) == 0 || s[0] != '/' {
			s = "/" + s // the normaliser's input always starts with '/'
		}
		in := []byte(s)
		for _, o := range allOptions {
			out, err := Path(nil, in, &o)
			checkDecode(t, in, &o, err)
			if err != nil {
				continue
			}
			checkInvariants(t, in, out, &o)
			if !strings.Contains(s, "%") {
				checkReferences(t, s, string(out), &o)
			}
		}
	})
}

// checkDecode compares the decoding step with url.PathUnescape: the same
// inputs fail, and decoding the output again gives what decoding the
// input gives (only unreserved escapes, which mean the same decoded or
// not, were decoded, and an unescaped "%2F" decodes to '/' either way).
// Intended divergence: Reject refuses "%2F" and "%5C", which
// PathUnescape decodes.
func checkDecode(t *testing.T, in []byte, o *Options, err error) {
	want, uerr := url.PathUnescape(string(in))
	d, derr := decode(nil, in, o.EscapedSlashes)
	if derr == ErrEscapedSlash {
		// Refused at the first escaped slash, which may come before
		// a malformed escape that PathUnescape reports.
		lower := strings.ToLower(string(in))
		if o.EscapedSlashes != Reject || !strings.Contains(lower, "%2f") && !strings.Contains(lower, "%5c") {
			t.Fatalf("decode(%q, %v) refused an escaped slash wrongly", in, o.EscapedSlashes)
		}
		return
	}
	if (uerr != nil) != (derr == ErrBadEscape) {
		t.Fatalf("decode(%q): %v; url.PathUnescape: %v", in, derr, uerr)
	}
	if derr != nil {
		if err != derr {
			t.Fatalf("Path(%q) err %v, decode err %v", in, err, derr)
		}
		return
	}
	got, gerr := url.PathUnescape(string(d))
	if gerr != nil || got != want {
		t.Fatalf("decode(%q) = %q, which decodes to %q (%v); the input decodes to %q", in, d, got, gerr, want)
	}
}

func checkInvariants(t *testing.T, in, out []byte, o *Options) {
	if len(out) > len(in) {
		t.Fatalf("Path(%q, %+v) = %q: longer than the input", in, *o, out)
	}
	if len(out) == 0 || out[0] != '/' {
		t.Fatalf("Path(%q, %+v) = %q: does not start with '/'", in, *o, out)
	}
	again, err := Path(nil, out, o)
	if err != nil || !bytes.Equal(again, out) {
		t.Fatalf("Path(%q, %+v) = %q, not a fixed point: %q, %v", in, *o, out, again, err)
	}
	for _, seg := range strings.Split(string(out[1:]), "/") {
		if seg == "." || seg == ".." {
			t.Fatalf("Path(%q, %+v) = %q keeps a dot segment", in, *o, out)
		}
	}
	if !o.KeepSlashes && bytes.Contains(out, []byte("//")) {
		t.Fatalf("Path(%q, %+v) = %q keeps \"//\"", in, *o, out)
	}
	for i := 0; i < len(out); i++ {
		if out[i] != '%' {
			continue
		}
		if i+2 >= len(out) || unhex(out[i+1]) < 0 || unhex(out[i+2]) < 0 ||
			strings.ToUpper(string(out[i+1:i+3])) != string(out[i+1:i+3]) ||
			unreserved(byte(unhex(out[i+1])<<4|unhex(out[i+2]))) {
			t.Fatalf("Path(%q, %+v) = %q: escape at %d is not a kept upper-case one", in, *o, out, i)
		}
		if o.EscapedSlashes == Unescape && string(out[i:i+3]) == "%2F" {
			t.Fatalf("Path(%q, %+v) = %q keeps %%2F", in, *o, out)
		}
	}
}

// checkReferences compares a path without escapes with path.Clean (slashes
// merged) or refRemoveDots (slashes kept). Intended divergences from
// path.Clean, which cleans file names rather than URLs: a trailing slash
// is kept ("/a/b/" and "/a/." give "/a/b/" and "/a/"), since a directory
// and a file are different resources to a backend; the empty path does
// not arise (the input starts with '/').
func checkReferences(t *testing.T, in, out string, o *Options) {
	if o.KeepSlashes {
		if want := refRemoveDots(in); out != want {
			t.Fatalf("Path(%q, %+v) = %q; RFC 3986 §5.2.4 gives %q", in, *o, out, want)
		}
		return
	}
	want := path.Clean(in)
	got := out
	if len(got) > 1 && got[len(got)-1] == '/' {
		got = got[:len(got)-1] // trailing slash kept: see above
	}
	if got != want {
		t.Fatalf("Path(%q) = %q; path.Clean gives %q", in, out, want)
	}
}

// refRemoveDots is RFC 3986 §5.2.4's remove_dot_segments, step by step on
// an input buffer and an output buffer, for paths that start with '/'.
func refRemoveDots(in string) string {
	out := ""
	for in != "" {
		switch {
		case strings.HasPrefix(in, "/./"):
			in = in[2:] // B
		case in == "/.":
			in = "/" // B
		case strings.HasPrefix(in, "/../"):
			in = in[3:] // C
			out = out[:max(strings.LastIndexByte(out, '/'), 0)]
		case in == "/..":
			in = "/" // C
			out = out[:max(strings.LastIndexByte(out, '/'), 0)]
		default: // E (A and D do not arise: the input starts with '/')
			j := strings.IndexByte(in[1:], '/')
			if j < 0 {
				j = len(in)
			} else {
				j++
			}
			out += in[:j]
			in = in[j:]
		}
	}
	if out == "" {
		out = "/" // the path of an origin-form target is never empty
	}
	return out
}

// FuzzScan checks the word-at-a-time scan against Clean and a byte loop.
func FuzzScan(f *testing.F) {
	for _, s := range []string{"/", "/api/v1/users/12345/profile?x", "/abcdefg/", "/abcdefg.", "/abcdefgh?/..", "/a%b", "/abcdefghijklmno//?"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b := []byte(s)
		end, clean := scan(b)
		wantEnd := strings.IndexAny(s, "?#")
		if wantEnd < 0 {
			wantEnd = len(s)
		}
		if end != wantEnd || clean != Clean(b[:wantEnd]) {
			t.Fatalf("scan(%q) = %d, %v; want %d, %v", s, end, clean, wantEnd, Clean(b[:wantEnd]))
		}
	})
}
