package url

import (
	"errors"
	"strings"
	"testing"

	"github.com/simdedge/simdedge/asm"
)

// The fast path must agree with the state machine on every conformance
// input it accepts (FuzzFastPath explores further).
func TestFastPathAgreesOnSeeds(t *testing.T) {
	accepted := 0
	for _, in := range seedInputs(t) {
		var fast, full URL
		if !fast.parseFast(in) {
			continue
		}
		accepted++
		if err := full.parseFull(in, nil); err != nil {
			t.Errorf("%q: fast path accepted, full parser: %v", in, err)
			continue
		}
		if d := sameURL(&fast, &full); d != "" {
			t.Errorf("%q: %s", in, d)
		}
	}
	if accepted == 0 {
		t.Fatal("fast path accepted no seed input")
	}
}

func TestEncoderSIMDMatchesScalar(t *testing.T) {
	// Dense marks (pseudo-random bytes) in the first half, sparse ones
	// (one space in 23) in the second, so both block strategies run.
	var src []byte
	for i := range 500 {
		src = append(src, byte(i*37+i/7))
	}
	for i := range 500 {
		if i%23 == 0 {
			src = append(src, ' ')
		} else {
			src = append(src, 'a'+byte(i%26))
		}
	}
	sets := []*encodeSet{c0ControlSet, fragmentSet, querySet, specialQuerySet, pathSet, userinfoSet, componentSet, formSet}
	for _, l := range asm.Levels() {
		prev := asm.SetLevel(l)
		for si, set := range sets {
			if set.t == nil {
				t.Errorf("set %d has no SIMD class table", si)
				continue
			}
			for n := 0; n <= len(src); n += 1 + n/8 {
				for off := 0; off < 3 && off < n; off++ {
					s := string(src[off:n])
					want := string(appendEncodedScalar([]byte("x"), s, set))
					got := string(appendEncodedSIMD([]byte("x"), s, set))
					if got != want {
						t.Fatalf("level %v set %d len %d off %d: SIMD encoder differs", l, si, n, off)
					}
				}
			}
		}
		asm.SetLevel(prev)
	}
}

func TestEncodeSetTables(t *testing.T) {
	for _, set := range []*encodeSet{c0ControlSet, fragmentSet, querySet, specialQuerySet, pathSet, userinfoSet, componentSet, formSet} {
		for b := range 256 {
			if set.in[b] != set.fn(byte(b)) {
				t.Fatalf("table disagrees with predicate at %#x", b)
			}
			if set.t != nil && (set.t.Class(byte(b))&1 != 0) != set.fn(byte(b)) {
				t.Fatalf("class table disagrees with predicate at %#x", b)
			}
		}
	}
	for b := range 256 {
		if forbiddenHost[b] != isForbiddenHost(byte(b)) || forbiddenDomain[b] != isForbiddenDomain(byte(b)) || fastClass[b] != fastClassOf(byte(b)) || (fastClass[b]&fastHostOK != 0) != isFastHostByte(byte(b)) {
			t.Fatalf("byte set disagrees with predicate at %#x", b)
		}
	}
}

func TestParseIntoZeroAllocs(t *testing.T) {
	inputs := []string{
		"https://www.example.com/path/to/file.html?q=1&r=2#frag",
		"http://EXAMPLE.org:8080/a b/c?d e",
		"https://user:pass@example.com/./a/../b?x#y",
		"file:///C:/dir/file",
		"mailto:someone@example.com",
		"http://[::1]:81/",
		"http://192.168.0.1.",
		"non-special://host/path",
		"https://example.com/" + strings.Repeat("long path with spaces ", 8) + "?" + strings.Repeat("q u e r y ", 10),
	}
	base, _ := Parse("https://base.example/dir/file", nil)
	var u URL
	for _, in := range inputs {
		if err := ParseInto(&u, in, base); err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		want, _ := Parse(in, base)
		if u.Href() != want.Href() {
			t.Fatalf("ParseInto(%q) = %q, Parse = %q", in, u.Href(), want.Href())
		}
		allocs := testing.AllocsPerRun(100, func() {
			if err := ParseInto(&u, in, base); err != nil {
				t.Fatal(err)
			}
		})
		if allocs != 0 {
			t.Errorf("ParseInto(%q): %v allocations per run, want 0", in, allocs)
		}
	}
}

// Failures on the error paths are allocation-free too (the *Error lives in
// the URL). Non-ASCII hosts go through IDNA, which may allocate.
func TestParseIntoFailureZeroAllocs(t *testing.T) {
	var u URL
	for _, in := range []string{"\"http://quoted", "http://[::1", "http://a b/", "http://h:99999/", "http://1.2.3.999/"} {
		if ParseInto(&u, in, nil) == nil {
			t.Fatalf("ParseInto(%q) succeeded, want failure", in)
		}
		allocs := testing.AllocsPerRun(100, func() { _ = ParseInto(&u, in, nil) })
		if allocs != 0 {
			t.Errorf("ParseInto(%q): %v allocations per run, want 0", in, allocs)
		}
	}
}

func TestGettersDoNotAllocate(t *testing.T) {
	u, _ := Parse("https://example.com:8443/p?q#f", nil)
	allocs := testing.AllocsPerRun(100, func() {
		_ = u.Href() + u.Protocol() + u.Username() + u.Password() + u.Host() + u.Hostname() +
			u.Port() + u.Pathname() + u.Search() + u.Hash() + u.Origin()
	})
	// One allocation is the test's own concatenation.
	if allocs > 1 {
		t.Errorf("getters: %v allocations, want none beyond the test's own", allocs)
	}
}

func TestErrors(t *testing.T) {
	cases := []struct {
		in   string
		want error
	}{
		{"http://ex ample.com/", ErrForbiddenHost},
		{"http://example.com:99999/", ErrInvalidPort},
		{"http://[::1/", ErrInvalidIPv6},
		{"http://1.2.3.256/", ErrInvalidIPv4},
		{"relative/path", ErrMissingScheme},
		{"http://user@/", ErrHostMissing},
	}
	for _, c := range cases {
		_, err := Parse(c.in, nil)
		if !errors.Is(err, c.want) {
			t.Errorf("Parse(%q) error %v, want %v", c.in, err, c.want)
			continue
		}
		var ue *Error
		if !errors.As(err, &ue) || ue.Op != "parse" || ue.Input != c.in {
			t.Errorf("Parse(%q): error %#v is not a *Error with Op and Input", c.in, err)
		}
		if strings.Contains(err.Error(), c.in) {
			t.Errorf("Parse(%q): error string echoes the input: %q", c.in, err.Error())
		}
	}
	if _, err := Parse(strings.Repeat("a", MaxInputLen+1), nil); !errors.Is(err, ErrTooLong) {
		t.Errorf("oversized input: %v, want ErrTooLong", err)
	}
}

func TestSettersKeepOldStrings(t *testing.T) {
	u, _ := Parse("https://example.com/a?b#c", nil)
	old := u.Href()
	if err := u.SetPathname("/new"); err != nil {
		t.Fatal(err)
	}
	if old != "https://example.com/a?b#c" || u.Href() != "https://example.com/new?b#c" {
		t.Fatalf("old %q new %q", old, u.Href())
	}
}

func TestBaseIsDst(t *testing.T) {
	u, _ := Parse("https://example.com/dir/file", nil)
	if err := ParseInto(u, "../other?x", u); err != nil {
		t.Fatal(err)
	}
	if u.Href() != "https://example.com/other?x" {
		t.Fatalf("got %q", u.Href())
	}
}

func TestZeroURLAndFailedParseInto(t *testing.T) {
	var z URL
	if z.Href() != "" || z.Protocol() != "" || z.Host() != "" || z.Pathname() != "" || z.Origin() != "null" {
		t.Errorf("zero URL getters: %q %q %q %q %q", z.Href(), z.Protocol(), z.Host(), z.Pathname(), z.Origin())
	}
	u, _ := Parse("https://example.com/keep?me#please", nil)
	for _, bad := range []string{"http://[::1", "\"x", "https://h:99999/", "https://ex ample/"} {
		if ParseInto(u, bad, nil) == nil {
			t.Fatalf("ParseInto(%q) succeeded", bad)
		}
		if u.Href() != "https://example.com/keep?me#please" || u.checkInvariants() != "" {
			t.Fatalf("failed ParseInto(%q) changed dst to %q", bad, u.Href())
		}
	}
}

// endsInNumber's early rejection by the last byte must keep every verdict
// of the standard's checker (§3.5 "ends in a number checker").
func TestEndsInNumber(t *testing.T) {
	for in, want := range map[string]bool{
		"": false, ".": false, "com": false, "example.com": false, "a.de": false, "a.ff": false,
		"1.2.3.4": true, "1.2.3.4.": true, "a.09": true, "a.0x": true, "a.0X": true, "a.0xfF": true,
		"x": false, "a.0xg": false, "a.1a": false, "a.xf": false, "a.b.": false, "a..": false,
	} {
		if got := endsInNumber(in); got != want {
			t.Errorf("endsInNumber(%q) = %v, want %v", in, got, want)
		}
	}
}
