package url

import (
	"strings"
	"testing"
	"unsafe"
)

// oneAllocInputs cover each way through Parse: the fast path from the
// stack buffer, with and without percent-encoding, and from the pooled
// buffer (too long for the stack buffer, or short but with enough bytes to
// encode to outgrow it); the state machine with and without a base, with
// credentials, ports, IPv6, opaque paths, "/." and long components.
var oneAllocInputs = []string{
	"https://example.com/",
	"http://EXAMPLE.com:8080/a/b?q=1#f",
	"https://example.com/p?q=a b c \"quoted\" <x>#frag ment",
	"https://example.com/" + strings.Repeat("segment/", 40) + "?" + strings.Repeat("k=v&", 30),
	"https://example.com/" + strings.Repeat("\u0436", stackHrefLen/4),
	"http://user:pass@host.example:81/./a/../b?x#y",
	"HTTP://h/a/./b/../c",
	"http://[::1]:81/",
	"http://192.168.0.1./x",
	"mailto:someone@example.com",
	"non-special://host/path?q#f",
	"web+demo:/.//not-a-host/",
	"file:///C:/x/../y",
	"relative/path?q",
	"//other.example/x",
	"?only-query",
	"#only-fragment",
	"https://example.com/" + strings.Repeat("long path with spaces ", 12) + "?" + strings.Repeat("q u e r y ", 30),
	"http://h/" + strings.Repeat("x", 40000),
}

// TestParseOneAlloc: Parse makes exactly one allocation per URL, the URL
// and its href together, for every way through it.
func TestParseOneAlloc(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector drops sync.Pool items, so pooled scratch allocates")
	}
	base, err := Parse("https://base.example/dir/file?bq#bf", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range oneAllocInputs {
		u, err := Parse(in, base)
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		want := 1.0
		if len(u.href) > maxBlockHref && !u.inputHref {
			want = 2 // the URL and a separate href beyond the largest block
		}
		allocs := testing.AllocsPerRun(20, func() {
			if _, err := Parse(in, base); err != nil {
				t.Fatal(err)
			}
		})
		if allocs != want {
			t.Errorf("Parse(%.40q): %v allocations per run, want %v", in, allocs, want)
		}
	}
}

// TestParseViewsInput: when the href is the input itself, Parse and
// ParseValue view the input instead of copying it (ParseValue then
// allocates nothing), and reusing such a URL never writes into the input:
// ParseInto and setters get buffers of their own.
func TestParseViewsInput(t *testing.T) {
	for _, in := range []string{"https://example.com/a/b?q=1#f", "mailto:someone@example.com", "http://h/" + strings.Repeat("x", 1000)} {
		// A heap copy: writing into it would change it, not fault.
		in = strings.Clone(in)
		keep := strings.Clone(in)
		u, err := Parse(in, nil)
		if err != nil {
			t.Fatal(err)
		}
		if msg := checkHrefStorage(u, in); msg != "" || !u.inputHref {
			t.Fatalf("Parse(%.40q): %s (views input: %v)", in, msg, u.inputHref)
		}
		if a := testing.AllocsPerRun(20, func() { _, _ = ParseValue(in, nil) }); a != 0 && !raceEnabled {
			t.Errorf("ParseValue(%.40q): %v allocations, want 0", in, a)
		}
		if err := ParseInto(u, "https://other.example/zzzzzzzzzz", nil); err != nil {
			t.Fatal(err)
		}
		if err := ParseInto(u, "non-special://zz/zz", nil); err != nil {
			t.Fatal(err)
		}
		v, _ := ParseValue(in, nil)
		if err := v.SetSearch("?changed"); err != nil {
			t.Fatal(err)
		}
		if err := ParseInto(&v, "https://other.example/zzzzzzzzzzzz", nil); err != nil {
			t.Fatal(err)
		}
		if in != keep {
			t.Fatalf("reusing Parse's URL wrote into its input: %.40q, was %.40q", in, keep)
		}
		if u.Href() != "non-special://zz/zz" || v.Href() != "https://other.example/zzzzzzzzzzzz" {
			t.Fatalf("reused URLs: %q, %q", u.Href(), v.Href())
		}
	}
	// SetHref builds a buffer of its own even when Parse could view its
	// value: here another URL's buffer, which that URL's next ParseInto
	// overwrites.
	var w, u URL
	if err := ParseInto(&w, "https://w.example/a", nil); err != nil {
		t.Fatal(err)
	}
	if err := u.SetHref(w.Href()); err != nil {
		t.Fatal(err)
	}
	if u.inputHref || unsafe.SliceData(u.href) == unsafe.SliceData(w.href) {
		t.Fatal("SetHref(w.Href()) shares w's buffer")
	}
	if err := ParseInto(&w, "https://x.example/b", nil); err != nil || u.Href() != "https://w.example/a" {
		t.Fatalf("u changed with w: %q, %v", u.Href(), err)
	}
	// A href that differs from its input is copied, once.
	in := "HTTP://Example.com"
	if v, _ := ParseValue(in, nil); v.inputHref || v.Href() != "http://example.com/" {
		t.Fatalf("ParseValue(%q) = %q, views input %v", in, v.Href(), v.inputHref)
	}
	if a := testing.AllocsPerRun(20, func() { _, _ = ParseValue(in, nil) }); a != 1 && !raceEnabled {
		t.Errorf("ParseValue(%q): %v allocations, want 1", in, a)
	}
}

// TestParseOneAllocWPT checks the same over every successful urltestdata
// case whose host is surely ASCII (IDNA processing of other hosts
// allocates; a host with percent-escapes may decode to non-ASCII), and
// that the URL's buffer was sized once: its length is its href's.
func TestParseOneAllocWPT(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector drops sync.Pool items, so pooled scratch allocates")
	}
	checked := 0
	for _, tc := range loadJSONObjects[urlTest](t, "wpt/urltestdata.json") {
		if tc.Failure || !isASCII(tc.Input) || strings.Contains(tc.Hostname, "xn--") || strings.Contains(authority(tc.Input), "%") {
			continue
		}
		var base *URL
		if tc.Base != nil {
			base, _ = Parse(*tc.Base, nil)
		}
		u, err := Parse(tc.Input, base)
		if err != nil {
			continue // TestWPTURLTestData reports it
		}
		if msg := checkHrefStorage(u, tc.Input); msg != "" {
			t.Errorf("Parse(%q): %s", tc.Input, msg)
		}
		allocs := testing.AllocsPerRun(5, func() { _, _ = Parse(tc.Input, base) })
		if allocs != 1 {
			t.Errorf("Parse(%q, %v): %v allocations per run, want 1", tc.Input, tc.Base != nil, allocs)
		}
		// ParseValue allocates only an href that is not the input.
		want := 1.0
		if u.inputHref {
			want = 0
		}
		if a := testing.AllocsPerRun(5, func() { _, _ = ParseValue(tc.Input, base) }); a != want {
			t.Errorf("ParseValue(%q, %v): %v allocations per run, want %v", tc.Input, tc.Base != nil, a, want)
		}
		checked++
	}
	if checked < 500 {
		t.Fatalf("only %d cases checked", checked)
	}
}

// authority returns what follows the first "//" of s up to the next '/',
// backslash, '?' or '#' (roughly the authority), or "".
func authority(s string) string {
	_, after, ok := strings.Cut(s, "//")
	if !ok {
		return ""
	}
	if i := strings.IndexAny(after, "/\\?#"); i >= 0 {
		after = after[:i]
	}
	return after
}

func isASCII(s string) bool {
	for i := range len(s) {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// blockCap is the href capacity newURL(n) gives.
func blockCap(n int) int {
	for _, s := range blockSizes {
		if n <= s.href {
			return s.href
		}
	}
	return n
}

func TestCloneOneAllocCanParseNone(t *testing.T) {
	for _, in := range oneAllocInputs[:len(oneAllocInputs)-1] {
		u, err := Parse(in, nil)
		if err != nil {
			continue // the relative inputs need a base
		}
		if a := testing.AllocsPerRun(20, func() { _ = u.Clone() }); a != 1 {
			t.Errorf("Clone(%.40q): %v allocations, want 1", in, a)
		}
		if c := u.Clone(); c.Href() != u.Href() || sameURL(c, u) != "" || unsafe.SliceData(c.href) == unsafe.SliceData(u.href) || c.inputHref {
			t.Errorf("Clone(%.40q) differs or shares the buffer", in)
		}
		// CanParse's record comes from a pool, which the race detector
		// drains at random.
		if a := testing.AllocsPerRun(20, func() { _ = CanParse(in, nil) }); a != 0 && !raceEnabled {
			t.Errorf("CanParse(%.40q): %v allocations, want 0", in, a)
		}
	}
}

// TestURLBlockSizes checks the arithmetic of blockSizes: the URL's size,
// and that every block holds its href capacity and fills a size class
// exactly (its size is one of the allocator's classes).
func TestURLBlockSizes(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) == 8 && unsafe.Sizeof(URL{}) != urlSize {
		t.Fatalf("unsafe.Sizeof(URL{}) = %d, urlSize = %d", unsafe.Sizeof(URL{}), urlSize)
	}
	prev := -1
	for _, s := range blockSizes {
		if s.href <= prev {
			t.Errorf("block sizes not increasing at %d", s.href)
		}
		prev = s.href
		u := s.alloc()
		if len(u.href) != 0 || cap(u.href) != s.href {
			t.Errorf("block %d: href len %d cap %d", s.href, len(u.href), cap(u.href))
		}
		// The href array starts right after the URL in the block.
		if got := uintptr(unsafe.Pointer(unsafe.SliceData(u.href))) - uintptr(unsafe.Pointer(u)); got != urlSize {
			t.Errorf("block %d: href at offset %d, want %d", s.href, got, urlSize)
		}
	}
	for n := range maxBlockHref + 2 {
		if u := newURL(n); cap(u.href) != blockCap(n) || len(u.href) != 0 {
			t.Fatalf("newURL(%d): len %d cap %d, want cap %d", n, len(u.href), cap(u.href), blockCap(n))
		}
	}
}
