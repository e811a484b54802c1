package url

import (
	"testing"
	"unicode/utf8"
)

func TestGeneratedTablesSorted(t *testing.T) {
	for i := 1; i < len(uts46Table); i++ {
		if uts46Table[i].lo <= uts46Table[i-1].lo {
			t.Fatalf("uts46Table not sorted at %d", i)
		}
		if e := uts46Table[i]; e.st == uts46Mapped && (int(e.off)+int(e.n) > len(uts46Mappings) || !utf8.ValidString(uts46Mappings[e.off:e.off+uint32(e.n)])) {
			t.Fatalf("uts46Table[%d] mapping out of range or not UTF-8", i)
		}
	}
	for i := 1; i < len(nfcDecomp); i++ {
		if nfcDecomp[i].r <= nfcDecomp[i-1].r {
			t.Fatalf("nfcDecomp not sorted at %d", i)
		}
	}
	for i := 1; i < len(nfcCompose); i++ {
		a, b := nfcCompose[i-1], nfcCompose[i]
		if b.a < a.a || (b.a == a.a && b.b <= a.b) {
			t.Fatalf("nfcCompose not sorted at %d", i)
		}
	}
	for _, tab := range [][]rune{ranges(cccTable[:]), ranges(bidiTable[:]), ranges(joiningTable[:])} {
		for i := 1; i < len(tab); i++ {
			if tab[i] <= tab[i-1] {
				t.Fatalf("range table not sorted at %d", i)
			}
		}
	}
}

func ranges[E cccEntry | bidiEntry | joiningEntry](es []E) []rune {
	var out []rune
	for _, e := range es {
		switch v := any(e).(type) {
		case cccEntry:
			out = append(out, v.lo)
		case bidiEntry:
			out = append(out, v.lo)
		case joiningEntry:
			out = append(out, v.lo)
		}
	}
	return out
}

func TestNFC(t *testing.T) {
	cases := []struct{ in, want string }{
		{"e\u0301", "\u00e9"},            // combining acute composes
		{"\u00e9", "\u00e9"},             // already NFC
		{"a\u0323\u0302", "\u1ead"},      // reordered marks compose fully
		{"a\u0302\u0323", "\u1ead"},      // canonical ordering first
		{"\u1100\u1161\u11a8", "\uac01"}, // Hangul L V T
		{"\uac00\u11a8", "\uac01"},       // Hangul LV + T
		{"=\u0338", "\u2260"},            // not-equal sign
		{"\u212b", "\u00c5"},             // singleton decomposition (Angstrom sign)
		{"\u0958", "\u0915\u093c"},       // composition exclusion stays decomposed
		{"A\u030a\u0301", "\u01fa"},      // two-step composition
	}
	for _, c := range cases {
		if got := string(nfc([]rune(c.in))); got != c.want {
			t.Errorf("nfc(%+q) = %+q, want %+q", c.in, got, c.want)
		}
	}
}
