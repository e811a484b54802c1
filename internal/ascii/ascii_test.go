package ascii

import (
	"strings"
	"testing"
)

func TestTcharTable(t *testing.T) {
	const spec = "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	for c := range 256 {
		want := strings.IndexByte(spec, byte(c)) >= 0
		if IsTchar(byte(c)) != want || isTchar(byte(c)) != want {
			t.Errorf("tchar %#x: %v, want %v", c, IsTchar(byte(c)), want)
		}
	}
}

func TestIsToken(t *testing.T) {
	for _, tc := range []struct {
		s    string
		want bool
	}{
		{"", false}, {"Content-Type", true}, {"x_y.z~!", true}, {"a b", false}, {"a:b", false},
		{"a\x7f", false}, {"caf\xc3\xa9", false}, {`"q"`, false}, {"GET", true},
	} {
		if IsToken(tc.s) != tc.want || IsToken([]byte(tc.s)) != tc.want {
			t.Errorf("IsToken(%q) = %v, want %v", tc.s, IsToken(tc.s), tc.want)
		}
	}
}

func TestEqualFold(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"", "", true}, {"Host", "host", true}, {"HOST", "hOsT", true}, {"host", "hosts", false},
		{"a-b", "A-B", true}, {"a-b", "a_b", false},
		// Only A-Z fold: '@' (0x40) and '`' (0x60) differ by the case
		// bit and must stay apart, as must '[' and '{'.
		{"@", "`", false}, {"[", "{", false},
		// No Unicode folding: the Kelvin sign is not K.
		{"k", "\u212a", false},
	} {
		if EqualFold(tc.a, tc.b) != tc.want || EqualFold([]byte(tc.a), tc.b) != tc.want ||
			EqualFold(tc.a, []byte(tc.b)) != tc.want || EqualFold([]byte(tc.a), []byte(tc.b)) != tc.want {
			t.Errorf("EqualFold(%q, %q) = %v, want %v", tc.a, tc.b, EqualFold(tc.a, tc.b), tc.want)
		}
	}
	// Every pair of bytes, against the definition.
	for x := range 256 {
		for y := range 256 {
			want := x == y || 'a' <= x|0x20 && x|0x20 <= 'z' && x|0x20 == y|0x20
			if got := EqualFold([]byte{byte(x)}, []byte{byte(y)}); got != want {
				t.Fatalf("EqualFold(%#x, %#x) = %v, want %v", x, y, got, want)
			}
		}
	}
}

func TestTrimOWS(t *testing.T) {
	for in, want := range map[string]string{
		"": "", " ": "", "\t a b \t": "a b", "a": "a", " \ta": "a", "a\t ": "a", "\na\n": "\na\n",
	} {
		if got := TrimOWS(in); got != want {
			t.Errorf("TrimOWS(%q) = %q, want %q", in, got, want)
		}
		if got := TrimOWS([]byte(in)); string(got) != want {
			t.Errorf("TrimOWS([]byte(%q)) = %q, want %q", in, got, want)
		}
	}
}

func TestNoAllocs(t *testing.T) {
	b := []byte(" Transfer-Encoding ")
	if n := testing.AllocsPerRun(100, func() {
		_ = EqualFold(TrimOWS(b), "transfer-encoding") && IsToken(TrimOWS(b))
	}); n != 0 {
		t.Errorf("%v allocations", n)
	}
}

var sink bool

func BenchmarkEqualFold(b *testing.B) {
	name := []byte("Transfer-Encoding")
	b.SetBytes(int64(len(name)))
	b.ReportAllocs()
	for b.Loop() {
		sink = EqualFold(name, "transfer-encoding")
	}
}
