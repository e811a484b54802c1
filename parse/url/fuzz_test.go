package url

import (
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/simdedge/simdedge/asm"
)

// seedInputs returns every input and base from the conformance data.
func seedInputs(t testing.TB) []string {
	var seeds []string
	for _, file := range []string{"wpt/urltestdata.json", "local_urltestdata.json", "ada_extra_urltestdata.json"} {
		for _, tc := range loadJSONObjects[urlTest](t, file) {
			seeds = append(seeds, tc.Input)
			if tc.Base != nil {
				seeds = append(seeds, *tc.Base)
			}
		}
	}
	return append(seeds,
		"https://www.example.com/a/b?c=d#e", "http://EXAMPLE.com:8080/%7e/?q=1 2#f<>",
		"https://a.b.c:443/./x", "http://h/a/../b", "https://1.2.3.4/", "http://h:65536/")
}

// sameURL reports the first difference between a and b's href and offsets.
func sameURL(a, b *URL) string {
	switch {
	case a.Href() != b.Href():
		return "href " + quote(a.Href()) + " vs " + quote(b.Href())
	case a.schemeEnd != b.schemeEnd || a.userStart != b.userStart || a.userEnd != b.userEnd ||
		a.passStart != b.passStart || a.passEnd != b.passEnd || a.hostStart != b.hostStart ||
		a.hostEnd != b.hostEnd || a.pathStart != b.pathStart || a.queryStart != b.queryStart ||
		a.fragStart != b.fragStart || a.port != b.port:
		return "offsets differ"
	case a.scheme != b.scheme || a.host != b.host || a.opaquePath != b.opaquePath:
		return "types differ"
	}
	return ""
}

// checkHrefStorage checks where Parse put u's href: the input's own bytes
// exactly when the href equals the input, else a block sized once.
func checkHrefStorage(u *URL, input string) string {
	n := len(u.href)
	views := n > 0 && unsafe.SliceData(u.href) == unsafe.StringData(input)
	switch {
	case u.Href() == input && (!views || !u.inputHref):
		return "href equals the input but is a copy"
	case u.Href() != input && (views || u.inputHref):
		return "href views the input but differs from it"
	case !u.inputHref && n <= maxBlockHref && cap(u.href) != blockCap(n):
		return "href of " + strconv.Itoa(n) + " bytes in a buffer of " + strconv.Itoa(cap(u.href)) + ", want " + strconv.Itoa(blockCap(n)) + " (sized once)"
	}
	return ""
}

// FuzzParse checks that parsing never panics, that every URL satisfies
// the offset invariants, that re-parsing an href gives the same href, and
// that Parse (stack buffer, pooled record, one block sized by hrefLen or
// a view of the input), ParseValue, ParseInto (the URL's own buffers) and
// CanParse agree.
func FuzzParse(f *testing.F) {
	for _, s := range seedInputs(f) {
		f.Add(s, "")
	}
	f.Add("a", "http://example.com/dir/")
	f.Fuzz(func(t *testing.T, input, baseInput string) {
		var base *URL
		if baseInput != "" {
			base, _ = Parse(baseInput, nil)
		}
		u, err := Parse(input, base)
		var into URL
		intoErr := ParseInto(&into, input, base)
		if (err == nil) != (intoErr == nil) || (err == nil) != CanParse(input, base) {
			t.Fatalf("%q: Parse error %v, ParseInto error %v, CanParse %v", input, err, intoErr, CanParse(input, base))
		}
		if err != nil {
			return
		}
		if d := sameURL(u, &into); d != "" {
			t.Fatalf("%q: Parse and ParseInto differ: %s", input, d)
		}
		if msg := checkHrefStorage(u, input); msg != "" {
			t.Fatalf("Parse(%q): %s", input, msg)
		}
		val, valErr := ParseValue(input, base)
		if valErr != nil {
			t.Fatalf("%q: Parse succeeded, ParseValue failed: %v", input, valErr)
		}
		if d := sameURL(u, &val); d != "" || val.inputHref != u.inputHref {
			t.Fatalf("%q: Parse and ParseValue differ: %s (views input: %v, %v)", input, d, u.inputHref, val.inputHref)
		}
		// Reusing a URL that views its input must leave the input alone.
		keep := strings.Clone(input)
		if err := ParseInto(u, "http://reuse.example/x", nil); err != nil || input != keep {
			t.Fatalf("%q: ParseInto over Parse's URL: err %v, input now %q", keep, err, input)
		}
		u, _ = Parse(input, base)
		if msg := u.checkInvariants(); msg != "" {
			t.Fatalf("Parse(%q): invariant: %s (href %q)", input, msg, u.Href())
		}
		v, err := Parse(u.Href(), nil)
		if err != nil {
			t.Fatalf("re-parse of %q (from %q) failed: %v", u.Href(), input, err)
		}
		if d := sameURL(u, v); d != "" {
			t.Fatalf("re-parse of %q (from %q) not idempotent: %s", u.Href(), input, d)
		}
	})
}

// FuzzFastPath checks that the fast path, wherever it accepts an input,
// gives exactly the URL the full state machine gives.
func FuzzFastPath(f *testing.F) {
	for _, s := range seedInputs(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, input string) {
		var fast URL
		if !fast.parseFast(input) {
			return
		}
		var full URL
		if err := full.parseFull(input, nil); err != nil {
			t.Fatalf("fast path accepted %q, full parser failed: %v", input, err)
		}
		if d := sameURL(&fast, &full); d != "" {
			t.Fatalf("fast path and full parser disagree on %q: %s", input, d)
		}
		if msg := fast.checkInvariants(); msg != "" {
			t.Fatalf("fast path %q: invariant: %s", input, msg)
		}
		// fastView (nothing written) says fastSame exactly when writing
		// does, then with the same offsets, and only for an href that
		// is the input.
		var w, view URL
		_, wres := w.fastPath(input, nil, fastGrow)
		_, vres := view.fastPath(input, nil, fastView)
		if (wres == fastSame) != (vres == fastSame) {
			t.Fatalf("%q: writing gives %d, viewing %d", input, wres, vres)
		}
		if vres == fastSame {
			view.href = []byte(input)
			if d := sameURL(&view, &full); d != "" {
				t.Fatalf("%q: fastView and full parser disagree: %s", input, d)
			}
		}
	})
}

// FuzzASMvsPurego checks that every asm dispatch level gives the same
// result as the pure-Go kernels.
func FuzzASMvsPurego(f *testing.F) {
	for _, s := range seedInputs(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, input string) {
		prev := asm.SetLevel(asm.Generic)
		defer asm.SetLevel(prev)
		want, wantErr := Parse(input, nil)
		wantEnc := string(appendEncodedScalar(nil, input, pathSet))
		for _, l := range asm.Levels() {
			asm.SetLevel(l)
			got, err := Parse(input, nil)
			if (err == nil) != (wantErr == nil) {
				t.Fatalf("level %v: error %v, generic %v", l, err, wantErr)
			}
			if err == nil {
				if d := sameURL(got, want); d != "" {
					t.Fatalf("level %v on %q: %s", l, input, d)
				}
			}
			// The SIMD encoder at every length, against the scalar one.
			if enc := string(appendEncodedSIMD(nil, input, pathSet)); enc != wantEnc {
				t.Fatalf("level %v: SIMD encoder differs on %q", l, input)
			}
		}
	})
}

// FuzzSetters checks that no setter panics or breaks the offset
// invariants, and that the href after a setter re-parses to itself.
func FuzzSetters(f *testing.F) {
	for i, s := range seedInputs(f) {
		f.Add(s, uint8(i), "value")
	}
	f.Add("https://example.com/", uint8(4), "h:1x")
	setters := []func(*URL, string) error{
		(*URL).SetHref, (*URL).SetProtocol, (*URL).SetUsername, (*URL).SetPassword, (*URL).SetHost,
		(*URL).SetHostname, (*URL).SetPort, (*URL).SetPathname, (*URL).SetSearch, (*URL).SetHash,
	}
	f.Fuzz(func(t *testing.T, input string, which uint8, value string) {
		u, err := Parse(input, nil)
		if err != nil {
			return
		}
		_ = setters[int(which)%len(setters)](u, value)
		if msg := u.checkInvariants(); msg != "" {
			t.Fatalf("setter %d(%q) on %q: invariant: %s (href %q)", int(which)%len(setters), value, input, msg, u.Href())
		}
		v, err := Parse(u.Href(), nil)
		if err != nil {
			t.Fatalf("setter %d(%q) on %q gave %q, which does not parse: %v", int(which)%len(setters), value, input, u.Href(), err)
		}
		if v.Href() != u.Href() {
			t.Fatalf("setter %d(%q) on %q gave %q, which re-parses as %q", int(which)%len(setters), value, input, u.Href(), v.Href())
		}
	})
}

// FuzzSearchParams checks that serializing parsed search parameters and
// parsing the result again gives the same list (the form-urlencoded
// serializer's output is in the parser's image), and that Sort is stable.
func FuzzSearchParams(f *testing.F) {
	f.Add("a=1&b=%20+x&&=&c")
	f.Add("\uFFFD=1&\U0001F600=2&a=%zz")
	f.Fuzz(func(t *testing.T, s string) {
		p := ParseSearchParams(s)
		q := ParseSearchParams(p.String())
		if p.Len() != q.Len() || p.String() != q.String() {
			t.Fatalf("%q: serialized %q re-parses to %q", s, p.String(), q.String())
		}
		for k, v := range p.All() {
			if !q.HasValue(k, v) {
				t.Fatalf("%q: pair %q=%q lost", s, k, v)
			}
		}
		q.Sort()
		if q.Len() != p.Len() {
			t.Fatalf("Sort changed the length")
		}
	})
}
