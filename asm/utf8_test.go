package asm

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"unicode/utf8"
)

// refValidUTF8 is the independent oracle for ValidUTF8: the table of
// well-formed byte sequences of the Unicode Standard (chapter 3, table 3-7),
// one sequence at a time. The twin is utf8.Valid, so this is what keeps the
// twin honest too.
func refValidUTF8(b []byte) bool {
	type rng struct{ lo, hi byte }
	const (
		cLo = 0x80
		cHi = 0xbf
	)
	rows := [][]rng{
		{{0x00, 0x7f}},
		{{0xc2, 0xdf}, {cLo, cHi}},
		{{0xe0, 0xe0}, {0xa0, cHi}, {cLo, cHi}},
		{{0xe1, 0xec}, {cLo, cHi}, {cLo, cHi}},
		{{0xed, 0xed}, {cLo, 0x9f}, {cLo, cHi}},
		{{0xee, 0xef}, {cLo, cHi}, {cLo, cHi}},
		{{0xf0, 0xf0}, {0x90, cHi}, {cLo, cHi}, {cLo, cHi}},
		{{0xf1, 0xf3}, {cLo, cHi}, {cLo, cHi}, {cLo, cHi}},
		{{0xf4, 0xf4}, {cLo, 0x8f}, {cLo, cHi}, {cLo, cHi}},
	}
next:
	for i := 0; i < len(b); {
		for _, row := range rows {
			if b[i] < row[0].lo || b[i] > row[0].hi {
				continue
			}
			if i+len(row) > len(b) {
				return false
			}
			for k, r := range row {
				if b[i+k] < r.lo || b[i+k] > r.hi {
					return false
				}
			}
			i += len(row)
			continue next
		}
		return false
	}
	return true
}

// utf8Runes are the code points at every width and range edge of UTF-8.
var utf8Runes = []rune{0x00, 0x41, 0x7f, 0x80, 0xe9, 0x7ff, 0x800, 0xfff, 0x1000, 0x3042, 0xcfff, 0xd000,
	0xd7ff, 0xe000, 0xfffd, 0xffff, 0x10000, 0x1f600, 0x3ffff, 0x40000, 0xfffff, 0x100000, 0x10ffff}

// utf8Bad are ill-formed sequences: surrogates, overlongs of every width,
// values above U+10FFFF, bytes that never occur, stray continuations and
// sequences cut short (followed by whatever comes next).
var utf8Bad = [][]byte{
	{0xed, 0xa0, 0x80}, {0xed, 0xbf, 0xbf}, {0xed, 0xaf, 0xbf, 0xed, 0xb0, 0x80}, // surrogates
	{0xc0, 0x80}, {0xc1, 0xbf}, {0xe0, 0x80, 0x80}, {0xe0, 0x9f, 0xbf}, // overlong 2, 3
	{0xf0, 0x80, 0x80, 0x80}, {0xf0, 0x8f, 0xbf, 0xbf}, // overlong 4
	{0xf4, 0x90, 0x80, 0x80}, {0xf4, 0xbf, 0xbf, 0xbf}, {0xf5, 0x80, 0x80, 0x80}, // above U+10FFFF
	{0xf7, 0xbf, 0xbf, 0xbf}, {0xf8, 0x88, 0x80, 0x80, 0x80}, {0xfe}, {0xff}, // F5..FF
	{0x80}, {0xbf}, {0x80, 0x80}, {0xc2, 0x80, 0x80}, {0xe2, 0x82, 0xac, 0x80}, // stray continuations
	{0xc2}, {0xe2, 0x82}, {0xe2}, {0xf0, 0x9f, 0x98}, {0xf0, 0x9f}, {0xf0}, // truncated
	{0xf0, 0x9f, 0x98, 0x80, 0x80}, // a continuation too many
}

// utf8EdgeBytes are the first and last bytes of every range in table 3-7.
var utf8EdgeBytes = []byte{0x00, 0x41, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc1, 0xc2, 0xdf,
	0xe0, 0xe1, 0xec, 0xed, 0xee, 0xef, 0xf0, 0xf1, 0xf3, 0xf4, 0xf5, 0xf7, 0xf8, 0xff}

// fillRunes fills b with whole valid sequences of random runes (edge runes
// and random ones of each width), padding the end with ASCII.
func fillRunes(r *rand.Rand, b []byte, asciiShare int) {
	i := 0
	for i < len(b) {
		var c rune
		switch k := r.IntN(100); {
		case k < asciiShare:
			c = 0x20 + rune(r.IntN(0x5f))
		case k < asciiShare+(100-asciiShare)/2:
			c = utf8Runes[r.IntN(len(utf8Runes))]
		default:
			c = rune(r.IntN(utf8.MaxRune + 1))
			if c >= 0xd800 && c <= 0xdfff {
				c = 0xfffd
			}
		}
		n := utf8.RuneLen(c)
		if i+n > len(b) {
			b[i] = 'x'
			i++
			continue
		}
		utf8.EncodeRune(b[i:], c)
		i += n
	}
}

var utf8Patterns = []pattern{
	{"random", func(r *rand.Rand, b []byte) {
		for i := range b {
			b[i] = byte(r.Uint32())
		}
	}},
	{"edges", func(r *rand.Rand, b []byte) {
		for i := range b {
			b[i] = utf8EdgeBytes[r.IntN(len(utf8EdgeBytes))]
		}
	}},
	{"runes", func(r *rand.Rand, b []byte) { fillRunes(r, b, 10) }},
	{"mostlyASCII", func(r *rand.Rand, b []byte) { fillRunes(r, b, 95) }},
	// Valid text with one ill-formed sequence written at a random place.
	{"runes+bad", func(r *rand.Rand, b []byte) {
		fillRunes(r, b, 50)
		if len(b) > 0 {
			bad := utf8Bad[r.IntN(len(utf8Bad))]
			copy(b[r.IntN(len(b)):], bad)
		}
	}},
	// Valid text truncated at a random place: whatever the buffer cut
	// holds at its end.
	{"runes/cut", func(r *rand.Rand, b []byte) {
		fillRunes(r, b, 30)
		if len(b) > 1 {
			k := r.IntN(len(b))
			fillRunes(r, b[k:], 30) // a sequence may now straddle k-1/k
		}
	}},
}

func checkValidUTF8(t *testing.T, in string, b []byte) {
	t.Helper()
	want := utf8.Valid(b)
	if ref := refValidUTF8(b); ref != want {
		t.Fatalf("%s: reference %v, utf8.Valid %v on % x", in, ref, want, b)
	}
	if got := validUTF8Generic(b); got != want {
		t.Fatalf("%s generic: got %v want %v", in, got, want)
	}
	forEachLevel(t, func(l Level) {
		if got := ValidUTF8(b); got != want {
			t.Fatalf("%s %v: got %v want %v on % x", in, l, got, want, b)
		}
		if got := ValidUTF8String(string(b)); got != want {
			t.Fatalf("%s %v string: got %v want %v", in, l, got, want)
		}
	})
}

// TestValidUTF8 runs every pattern at every length 0..300 and offset 0..63.
func TestValidUTF8(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	buf := make([]byte, maxTestOffset+maxTestLen+64)
	valid := 0
	for _, p := range utf8Patterns {
		for n := 0; n <= maxTestLen; n++ {
			for off := 0; off <= maxTestOffset; off++ {
				for i := range buf {
					buf[i] = 0xff // junk around the input: invalid if read
				}
				b := buf[off : off+n : off+n]
				p.fill(r, b)
				if utf8.Valid(b) {
					valid++
				}
				checkValidUTF8(t, fmt.Sprintf("%s/len=%d/off=%d", p.name, n, off), b)
				if t.Failed() {
					return
				}
			}
		}
	}
	// The patterns must exercise both verdicts in bulk.
	if total := len(utf8Patterns) * (maxTestLen + 1) * (maxTestOffset + 1); valid < total/4 || valid > total*3/4 {
		t.Errorf("%d of %d inputs valid: the patterns no longer exercise both verdicts", valid, total)
	}
}

// TestValidUTF8Boundaries writes every ill-formed sequence, and every edge
// rune, at every position 0..140 of ASCII and of multi-byte text, so each
// one straddles the 32- and 64-byte vector edges and the tails in every way.
func TestValidUTF8Boundaries(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	var seqs [][]byte
	seqs = append(seqs, utf8Bad...)
	for _, c := range utf8Runes {
		seqs = append(seqs, utf8.AppendRune(nil, c))
	}
	for _, bg := range []string{"ascii", "multibyte"} {
		for _, seq := range seqs {
			for pos := 0; pos <= 140; pos++ {
				for _, extra := range []int{0, 1, 2, 3, 29, 61, 64, 130} {
					b := make([]byte, pos+len(seq)+extra)
					if bg == "ascii" {
						for i := range b {
							b[i] = 'a'
						}
					} else {
						// Whole sequences before and after seq.
						fillRunes(r, b[:pos], 0)
						fillRunes(r, b[pos+len(seq):], 0)
					}
					copy(b[pos:], seq)
					checkValidUTF8(t, fmt.Sprintf("%s/% x@%d+%d", bg, seq, pos, extra), b)
					if t.Failed() {
						return
					}
				}
			}
		}
	}
}

// TestValidUTF8Exhaustive checks every 1-, 2- and 3-byte sequence and the
// 4-byte sequences over the edge bytes, placed across the 32- and 64-byte
// vector edges and at the very end of the input.
func TestValidUTF8Exhaustive(t *testing.T) {
	if testing.Short() {
		t.Skip("exhaustive sequences in -short mode")
	}
	var buf [72]byte
	for i := range buf {
		buf[i] = 'a'
	}
	check := func(seq []byte) {
		want := refValidUTF8(seq)
		// Positions: across the AVX2 edge (30..33), across the AVX-512
		// edge (62..65), and at the end of a 40-byte input.
		for _, at := range []int{30, 31, 62, 40 - len(seq)} {
			b := buf[:max(at+len(seq), 40)]
			copy(b[at:], seq)
			forEachLevel(t, func(l Level) {
				if got := ValidUTF8(b); got != want {
					t.Fatalf("%v: % x at %d: got %v want %v", l, seq, at, got, want)
				}
			})
			copy(b[at:], "aaaa"[:len(seq)])
		}
	}
	seq := make([]byte, 4)
	for a := 0; a < 256; a++ {
		seq[0] = byte(a)
		check(seq[:1])
		for b := 0; b < 256; b++ {
			seq[1] = byte(b)
			check(seq[:2])
			if a < 0xe0 || a > 0xef {
				continue // 3-byte sequences only after a 3-byte lead; others below
			}
			for c := 0; c < 256; c++ {
				seq[2] = byte(c)
				check(seq[:3])
			}
		}
		if t.Failed() {
			return
		}
	}
	for _, a := range utf8EdgeBytes {
		for _, b := range utf8EdgeBytes {
			for _, c := range utf8EdgeBytes {
				seq = []byte{a, b, c}
				check(seq)
				for _, d := range utf8EdgeBytes {
					check(append(seq, d))
				}
			}
		}
	}
}

func TestValidUTF8Cases(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want bool
	}{
		{"", true},
		{"plain", true},
		{"caf\u00e9 \u3042\U0001f600", true},
		{"\xed\xa0\x80", false}, // U+D800
		{"\xef\xbf\xbf", true},  // U+FFFF
		{"\xf4\x8f\xbf\xbf", true},
		{"\xf4\x90\x80\x80", false},
		{"\xc0\xaf", false},
		{"\xe0\x80\xaf", false},
		{string(slices.Repeat([]byte("a"), 63)) + "\xc3", false},
		{string(slices.Repeat([]byte("a"), 63)) + "\xc3\xa9", true},
		{string(slices.Repeat([]byte("a"), 64)) + "\x80", false},
		{string(slices.Repeat([]byte("\u3042"), 50)), true},
	} {
		forEachLevel(t, func(l Level) {
			if got := ValidUTF8String(tc.in); got != tc.want {
				t.Errorf("%v ValidUTF8(%q) = %v, want %v", l, tc.in, got, tc.want)
			}
		})
	}
}

// TestValidUTF8GuardPages runs the kernels on inputs that end exactly at an
// inaccessible page or start right after one (the AVX2 tail load must not
// touch the next page; its masked dwords must not fault).
func TestValidUTF8GuardPages(t *testing.T) {
	page := guarded(t)
	fillRunes(rand.New(rand.NewPCG(15, 16)), page, 40)
	for n := 0; n <= maxTestLen; n++ {
		for _, b := range [][]byte{page[len(page)-n:], page[:n]} {
			want := utf8.Valid(b)
			forEachLevel(t, func(l Level) {
				if got := ValidUTF8(b); got != want {
					t.Fatalf("%v len %d: got %v want %v", l, n, got, want)
				}
			})
		}
	}
}

func TestValidUTF8NoAllocations(t *testing.T) {
	b := []byte(string(slices.Repeat([]byte("ab\u00e9\u3042"), 100)))
	s := string(b)
	forEachLevel(t, func(l Level) {
		if a := testing.AllocsPerRun(100, func() { ValidUTF8(b); ValidUTF8String(s) }); a != 0 {
			t.Errorf("%v: %v allocations per call, want 0", l, a)
		}
		if a := testing.AllocsPerRun(100, func() {
			var stack [100]byte
			copy(stack[:], "caf\u00e9")
			ValidUTF8(stack[:])
		}); a != 0 {
			t.Errorf("%v: %v allocations with a stack buffer, want 0", l, a)
		}
	})
}

func FuzzValidUTF8(f *testing.F) {
	fuzzSeeds(f)
	for _, bad := range utf8Bad {
		f.Add(append(slices.Repeat([]byte("\u3042"), 20), bad...), uint8(5))
	}
	f.Add([]byte("caf\u00e9 \U0001f600 \xed\xa0\x80"), uint8(63))
	f.Fuzz(func(t *testing.T, data []byte, off uint8) {
		b := fuzzInput(data, off)
		want := utf8.Valid(b)
		if ref := refValidUTF8(b); ref != want {
			t.Fatalf("reference %v, utf8.Valid %v", ref, want)
		}
		forEachLevel(t, func(l Level) {
			if got := ValidUTF8(b); got != want {
				t.Fatalf("%v: got %v want %v", l, got, want)
			}
		})
	})
}

// benchUTF8 is valid text with the given share of ASCII runes (the rest
// Japanese, as in twitter.json's texts, and some emoji).
func benchUTF8(n, asciiShare int) []byte {
	r := rand.New(rand.NewPCG(17, 18))
	var b []byte
	for len(b) < n {
		switch k := r.IntN(100); {
		case k < asciiShare:
			b = append(b, 0x20+byte(r.IntN(0x5f)))
		case k < asciiShare+(100-asciiShare)*9/10:
			b = utf8.AppendRune(b, 0x3041+rune(r.IntN(0x56)))
		default:
			b = utf8.AppendRune(b, 0x1f600+rune(r.IntN(0x40)))
		}
	}
	// Cut to n bytes; a sequence cut at the end becomes ASCII padding.
	b = b[:n]
	for i := len(b) - 1; i >= 0 && i >= n-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				for k := i; k < n; k++ {
					b[k] = 'x'
				}
			}
			break
		}
	}
	if !utf8.Valid(b) {
		panic("benchUTF8: invalid text")
	}
	return b
}

// BenchmarkValidUTF8 runs on ASCII, on mixed text (85 % ASCII runes, close
// to twitter.json's strings) and on Japanese text; level=generic is
// utf8.Valid, the peer.
func BenchmarkValidUTF8(b *testing.B) {
	for _, kind := range []struct {
		name  string
		ascii int
	}{{"ascii", 100}, {"mixed", 85}, {"japanese", 0}} {
		b.Run(kind.name, func(b *testing.B) {
			for _, n := range []int{16, 64, 256, 4096} {
				src := benchUTF8(n, kind.ascii)
				benchLevels(b, n, func(b *testing.B) {
					for b.Loop() {
						if !ValidUTF8(src) {
							b.Fatal("invalid")
						}
					}
				})
			}
		})
	}
}
