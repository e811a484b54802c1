package url

import (
	"slices"
	"testing"
)

func TestSearchParamsParse(t *testing.T) {
	// Cases from the application/x-www-form-urlencoded parser (§5.1):
	// empty sequences skipped, '+' is space, missing '=' gives "",
	// malformed escapes kept, invalid UTF-8 becomes U+FFFD.
	p := ParseSearchParams("?&a=1&&b&=c&d=%zz%41+%2B&e=%FF")
	var got [][2]string
	for k, v := range p.All() {
		got = append(got, [2]string{k, v})
	}
	want := [][2]string{{"a", "1"}, {"b", ""}, {"", "c"}, {"d", "%zzA +"}, {"e", "\uFFFD"}}
	if !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestSearchParamsMethods(t *testing.T) {
	p := ParseSearchParams("x=1&y=2&x=3")
	if v, ok := p.Get("x"); !ok || v != "1" {
		t.Errorf("Get(x) = %q %v", v, ok)
	}
	if _, ok := p.Get("z"); ok || p.Has("z") || !p.Has("y") || !p.HasValue("x", "3") || p.HasValue("x", "2") {
		t.Error("Get/Has/HasValue wrong")
	}
	p.Set("x", "9")
	if p.String() != "x=9&y=2" {
		t.Errorf("after Set: %q", p.String())
	}
	p.Set("new", "a b")
	p.Append("x", "~!'()*")
	if p.String() != "x=9&y=2&new=a+b&x=%7E%21%27%28%29*" {
		t.Errorf("after Append: %q", p.String())
	}
	p.DeleteValue("x", "9")
	p.Delete("y")
	if p.String() != "new=a+b&x=%7E%21%27%28%29*" || p.Len() != 2 {
		t.Errorf("after Delete: %q", p.String())
	}
	keys := slices.Collect(p.Keys())
	vals := slices.Collect(p.Values())
	if !slices.Equal(keys, []string{"new", "x"}) || !slices.Equal(vals, []string{"a b", "~!'()*"}) {
		t.Errorf("Keys %q Values %q", keys, vals)
	}
}

// Sort compares UTF-16 code units: U+1F600 (surrogates D83D DE00) sorts
// before U+FFFD, though its UTF-8 bytes sort after; the sort is stable.
func TestSearchParamsSortUTF16(t *testing.T) {
	p := ParseSearchParams("\uFFFD=1&\U0001F600=2&a=3&a=4&=5")
	p.Sort()
	if got := slices.Collect(p.Values()); !slices.Equal(got, []string{"5", "3", "4", "2", "1"}) {
		t.Errorf("sorted values %q", got)
	}
}

func TestSearchParamsRoundTripThroughURL(t *testing.T) {
	u, _ := Parse("https://h/p?q=a+b&r=%26", nil)
	p := ParseSearchParams(u.Search())
	p.Set("s", "x y&z")
	if err := u.SetSearch(p.String()); err != nil {
		t.Fatal(err)
	}
	if u.Href() != "https://h/p?q=a+b&r=%26&s=x+y%26z" {
		t.Errorf("href %q", u.Href())
	}
}

func TestUTF8Replacing(t *testing.T) {
	cases := []struct{ in, want string }{
		{"abc", "abc"},
		{"\xff\xff", "\uFFFD\uFFFD"},           // each invalid byte
		{"\xe2\x82", "\uFFFD"},                 // one maximal subpart
		{"\xe2\x82A", "\uFFFDA"},               // the offending byte is kept
		{"\xed\xa0\x80", "\uFFFD\uFFFD\uFFFD"}, // a surrogate is three errors
		{"\xf0\x9f\x98\x80", "\U0001F600"},     // valid 4-byte sequence
		{"\xc0\xaf", "\uFFFD\uFFFD"},           // overlong
	}
	for _, c := range cases {
		if got := string(appendUTF8Replacing(nil, c.in)); got != c.want {
			t.Errorf("%+q: got %+q, want %+q", c.in, got, c.want)
		}
	}
}
