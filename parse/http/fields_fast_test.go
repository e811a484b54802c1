package http

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestFastFieldsAlignments runs heads whose lines land at every offset of
// the 64-byte blocks (the target's length shifts them) through every walk
// and Headers capacity (parseReqAll): names and values across block and
// window ends, CRLFs split across blocks, tabs, empty values, more framing
// fields than one fast run notes, and, one line at a time, each kind of bad
// line, also after a bad framing field, so the order of errors is checked.
func TestFastFieldsAlignments(t *testing.T) {
	lines := []string{
		"Host: example.com",
		"User-Agent: Mozilla/5.0 (X11; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0",
		"Tab:\tvalue\twith tabs \t",
		"Empty:",
		"Spaces:     ",
		"Trail: value   ",
		strings.Repeat("N", 70) + ": " + strings.Repeat("v", 3),
		"Long: " + strings.Repeat("x", 150),
		"Connection: keep-alive, Upgrade",
		"Connection: Keep-Alive",
		"Upgrade: websocket",
		"Expect: 100-continue",
	}
	for range 9 {
		lines = append(lines, "Content-Length: 5")
	}
	bad := []string{
		"Bad: a\rb", "Bad: a\nb", "Bad : x", " folded", "Bad: a\x00b", "Bad: a\x7fb",
		"Bad\x01: x", ": empty", "Content-Length: 6", "Content-Length: x",
		"Transfer-Encoding: chunked", "Host: a b", "HOST: example.com",
	}
	build := func(pad int, ls []string) []byte {
		var b strings.Builder
		fmt.Fprintf(&b, "POST /%s HTTP/1.1\r\n", strings.Repeat("a", pad))
		for _, l := range ls {
			b.WriteString(l + "\r\n")
		}
		b.WriteString("\r\nhello")
		return []byte(b.String())
	}
	few := NewParser(Options{MaxHeaders: 5})
	lenient := NewParser(Options{AllowBareLF: true})
	for pad := range 130 {
		if got := parseReqAll(t, defaultParser, build(pad, lines)); got.Err != nil {
			t.Fatalf("pad %d: %v", pad, got.Err)
		}
		if got := parseReqAll(t, few, build(pad, lines)); !errors.Is(got.Err, ErrTooManyHeaders) {
			t.Fatalf("pad %d, 5 headers at most: %v", pad, got.Err)
		}
		// Past two windows: the window grows once, then moves.
		big := append(append([]string{}, lines...), "Big: "+strings.Repeat("y", 400), "Big: "+strings.Repeat("z", 700), "Host2: x")
		if got := parseReqAll(t, defaultParser, build(pad, big)); got.Err != nil {
			t.Fatalf("pad %d, big head: %v", pad, got.Err)
		}
		plain := make([]string, 8)
		for i := range plain {
			plain[i] = fmt.Sprintf("X-%d: %d", i, i)
		}
		if got := parseReqAll(t, few, build(pad, append(plain, "Host: a"))); !errors.Is(got.Err, ErrTooManyHeaders) {
			t.Fatalf("pad %d, 5 plain headers at most: %v", pad, got.Err)
		}
		parseReqAll(t, lenient, []byte(strings.ReplaceAll(string(build(pad, lines)), "keep-alive, Upgrade\r\n", "close\n")))
		for _, at := range []int{0, 3, 7, len(lines)} {
			for _, b := range bad {
				ls := append(append(append([]string{}, lines[:at]...), b), lines[at:]...)
				if got := parseReqAll(t, defaultParser, build(pad, ls)); got.Err == nil {
					t.Fatalf("pad %d, %q at %d: no error", pad, b, at)
				}
			}
			// A bad framing field before a bad line: the framing error
			// comes first, as it would line by line.
			ls := append(append(append([]string{}, lines[:at]...), "Content-Length: x", "Bad Name: y"), lines[at:]...)
			if got := parseReqAll(t, defaultParser, build(pad, ls)); !errors.Is(got.Err, ErrInvalidContentLength) {
				t.Fatalf("pad %d: %v, want ErrInvalidContentLength", pad, got.Err)
			}
		}
	}
}

// kindOfRef is kindOf's definition: the framing field whose name equals
// name under ASCII case folding.
func kindOfRef(name []byte) fieldKind {
	for _, f := range framingFields {
		if EqualFold(name, f.name) {
			return f.kind
		}
	}
	return fieldOther
}

// TestKindOf checks kindOf and maybeFraming against the definition for
// each framing name in every case pattern of its first bytes, and with
// each byte replaced by every tchar; and that the names' lengths differ.
func TestKindOf(t *testing.T) {
	seen := map[int]bool{}
	for _, f := range framingFields {
		if seen[len(f.name)] {
			t.Fatalf("two framing names of length %d", len(f.name))
		}
		seen[len(f.name)] = true
		if len(f.name) < 4 || len(f.name) > 24 {
			t.Fatalf("%q: foldedWords takes 4 to 24 bytes", f.name)
		}
		check := func(name []byte) {
			t.Helper()
			want := kindOfRef(name)
			if got := kindOf(name); got != want {
				t.Fatalf("kindOf(%q) = %v, want %v", name, got, want)
			}
			if want != fieldOther && !maybeFraming(name) {
				t.Fatalf("maybeFraming(%q) = false", name)
			}
		}
		for mask := range 1 << 8 {
			name := []byte(f.name)
			for i := range name {
				if mask>>(i%8)&1 != 0 && name[i] >= 'a' && name[i] <= 'z' {
					name[i] -= 'a' - 'A'
				}
			}
			check(name)
		}
		for i := range f.name {
			for b := range 256 {
				if !tcharSet[b] {
					continue
				}
				name := []byte(f.name)
				name[i] = byte(b)
				check(name)
			}
		}
	}
	for _, n := range []string{"", "h", "ho", "hos", "hostt", "x-host", "content-lengths"} {
		if got := kindOf([]byte(n)); got != fieldOther {
			t.Fatalf("kindOf(%q) = %v", n, got)
		}
	}
}
