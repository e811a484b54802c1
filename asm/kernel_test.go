package asm

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

const (
	maxTestLen    = 300 // lengths 0..maxTestLen
	maxTestOffset = 63  // start offsets 0..maxTestOffset
)

// edgeBytes are the class boundaries of every kernel: controls, the three
// tab/newline bytes, the letter range edges, DEL, and the high-bit edges.
var edgeBytes = []byte{0x00, 0x01, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x1f, 0x20, 0x21, 0x2f, 0x30,
	0x3a, 0x40, 0x41, 0x5a, 0x5b, 0x60, 0x61, 0x7a, 0x7b, 0x7e, 0x7f, 0x80, 0x81, 0xbf, 0xc0, 0xfe, 0xff}

// pattern fills b in one of several ways that stress different paths.
type pattern struct {
	name string
	fill func(r *rand.Rand, b []byte)
}

var patterns = []pattern{
	{"random", func(r *rand.Rand, b []byte) {
		for i := range b {
			b[i] = byte(r.Uint32())
		}
	}},
	{"edges", func(r *rand.Rand, b []byte) {
		for i := range b {
			b[i] = edgeBytes[r.IntN(len(edgeBytes))]
		}
	}},
	// Mostly plain letters with a rare edge byte, so searches run far.
	{"sparse", func(r *rand.Rand, b []byte) {
		for i := range b {
			b[i] = 'a' + byte(r.IntN(26))
			if r.IntN(97) == 0 {
				b[i] = edgeBytes[r.IntN(len(edgeBytes))]
			}
		}
	}},
	{"plain", func(r *rand.Rand, b []byte) {
		for i := range b {
			b[i] = 'a' + byte(r.IntN(26))
		}
	}},
}

// forEachInput calls f with every length 0..maxTestLen at every offset
// 0..maxTestOffset for every pattern. The slice has capacity exactly its
// length, and bytes around it hold junk so a kernel reading or writing
// outside it shows up as a difference.
func forEachInput(t *testing.T, f func(t *testing.T, name string, b []byte)) {
	r := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, maxTestOffset+maxTestLen+64)
	for _, p := range patterns {
		for n := 0; n <= maxTestLen; n++ {
			for off := 0; off <= maxTestOffset; off++ {
				p.fill(r, buf)
				b := buf[off : off+n : off+n]
				f(t, fmt.Sprintf("%s/len=%d/off=%d", p.name, n, off), b)
				if t.Failed() {
					return
				}
			}
		}
	}
}

// forEachLevel runs f at every level this CPU supports, restoring the
// detected level afterwards.
func forEachLevel(_ testing.TB, f func(l Level)) {
	prev := active
	defer SetLevel(prev)
	for _, l := range Levels() {
		SetLevel(l)
		f(l)
	}
}

func isTchar(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' ||
		strings.IndexByte("!#$%&'*+-.^_`|~", b) >= 0
}

// testTables are class sets the parsers use, plus odd ones.
var testTables = map[string][]func(byte) bool{
	"http": {
		func(b byte) bool { return b == '\r' },
		func(b byte) bool { return b == '\n' },
		func(b byte) bool { return b == ':' },
		func(b byte) bool { return b == ' ' || b == '\t' },
		func(b byte) bool { return b < 0x20 || b == 0x7f },
		func(b byte) bool { return b >= 0x80 },
	},
	"tchar": {isTchar},
	"one":   {func(b byte) bool { return b == 0 }},
	"all":   {func(byte) bool { return true }},
	"none":  {func(byte) bool { return false }},
	"eight": eightClasses(),
	// The kernels run one loop per class count: every count from 1 to
	// 8 has a table here.
	"three":   eightClasses()[:3],
	"four":    eightClasses()[:4],
	"five":    eightClasses()[:5],
	"seven":   eightClasses()[:7],
	"highlow": {func(b byte) bool { return b >= 0x80 }, func(b byte) bool { return b < 0x10 }},
}

// eightClasses returns 8 single-byte classes (one rectangle each).
func eightClasses() []func(byte) bool {
	var cs []func(byte) bool
	for _, v := range []byte{0x00, 0x0d, 0x20, 0x3a, 0x7f, 0x80, 0xc3, 0xff} {
		cs = append(cs, func(b byte) bool { return b == v })
	}
	return cs
}

func TestClassTableExact(t *testing.T) {
	for name, cs := range testTables {
		tab, err := NewClassTable(cs...)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if tab.Classes() != len(cs) {
			t.Errorf("%s: Classes() = %d, want %d", name, tab.Classes(), len(cs))
		}
		for b := 0; b < 256; b++ {
			for c, in := range cs {
				if got := tab.Class(byte(b))&(1<<c) != 0; got != in(byte(b)) {
					t.Errorf("%s: class %d of %#02x = %v", name, c, b, got)
				}
			}
		}
	}
}

func TestClassTableErrors(t *testing.T) {
	if _, err := NewClassTable(); err != ErrNoClasses {
		t.Errorf("no classes: err = %v", err)
	}
	nine := append(eightClasses(), isTchar)
	if _, err := NewClassTable(nine...); err != ErrTooManyClasses {
		t.Errorf("nine classes: err = %v", err)
	}
	// Eight scattered bytes per class cannot share rectangles: too many.
	var many []func(byte) bool
	for c := 0; c < 3; c++ {
		many = append(many, func(b byte) bool { return b%37 == byte(c) })
	}
	if _, err := NewClassTable(many...); err != ErrTableFull {
		t.Errorf("scattered classes: err = %v, want ErrTableFull", err)
	}
}

func TestRandomClassTables(t *testing.T) {
	// Random unions of rectangles must decompose exactly when they fit.
	r := rand.New(rand.NewPCG(3, 4))
	fitted := 0
	for i := 0; i < 500; i++ {
		var cs []func(byte) bool
		for c := 0; c < 1+r.IntN(MaxClasses); c++ {
			rows, cols := uint16(r.Uint32()), uint16(r.Uint32())
			if r.IntN(2) == 0 {
				rows &= uint16(r.Uint32())
			}
			cs = append(cs, func(b byte) bool { return rows&(1<<(b>>4)) != 0 && cols&(1<<(b&15)) != 0 })
		}
		tab, err := NewClassTable(cs...)
		if err == ErrTableFull {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		fitted++
		for b := 0; b < 256; b++ {
			for c, in := range cs {
				if tab.Class(byte(b))&(1<<c) != 0 != in(byte(b)) {
					t.Fatalf("table %d class %d byte %#02x wrong", i, c, b)
				}
			}
		}
	}
	if fitted < 100 {
		t.Errorf("only %d of 500 random tables fitted", fitted)
	}
}

func TestClassify(t *testing.T) {
	for name, cs := range testTables {
		tab := MustClassTable(cs...)
		t.Run(name, func(t *testing.T) {
			forEachInput(t, func(t *testing.T, in string, b []byte) {
				want := refClassify(b, cs)
				got := make([]uint64, len(want)+1)
				got[len(want)] = 0xdeadbeef
				if n := classifyTwin(got, b, tab); n != len(want) || !slices.Equal(got[:n], want) {
					t.Fatalf("%s generic: got %x want %x", in, got[:len(want)], want)
				}
				forEachLevel(t, func(l Level) {
					clear(got[:len(want)])
					if n := Classify(got, b, tab); n != len(want) || !slices.Equal(got[:n], want) {
						t.Fatalf("%s %v: got %x want %x", in, l, got[:len(want)], want)
					}
					if got[len(want)] != 0xdeadbeef {
						t.Fatalf("%s %v: wrote past the result", in, l)
					}
				})
			})
		})
	}
}

// classifyTwin calls the pure-Go twin directly, as Classify would.
func classifyTwin(dst []uint64, src []byte, t *ClassTable) int {
	n := ClassifiedLen(len(src), t.n)
	if n > 0 {
		classifyGeneric(dst[:n], src, t)
	}
	return n
}

func TestClassifyShortDst(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Classify with a short dst did not panic")
		}
	}()
	Classify(make([]uint64, 1), make([]byte, 65), MustClassTable(isTchar))
}

func TestIndexTabNewline(t *testing.T) {
	forEachInput(t, func(t *testing.T, in string, b []byte) {
		want := refIndexTabNewline(b)
		if len(b) > 0 {
			if got := indexTabNewlineGeneric(b); got != want {
				t.Fatalf("%s generic: got %d want %d", in, got, want)
			}
		}
		forEachLevel(t, func(l Level) {
			if got := IndexTabNewline(b); got != want {
				t.Fatalf("%s %v: got %d want %d", in, l, got, want)
			}
			if got := IndexTabNewlineString(string(b)); got != want {
				t.Fatalf("%s %v string: got %d want %d", in, l, got, want)
			}
		})
	})
}

// rangeCases are the [lo, hi] ranges the range scan is tested with: the
// named helpers' ranges, single bytes, the full range and edge ranges.
var rangeCases = [][2]byte{{0x00, 0x7f}, {0x20, 0x7e}, {0x00, 0xff}, {0x41, 0x5a}, {0x80, 0xff},
	{0x00, 0x00}, {0xff, 0xff}, {0x7f, 0x80}, {0x61, 0x7a}, {0x01, 0xfe}}

func TestIndexNotInRange(t *testing.T) {
	forEachInput(t, func(t *testing.T, in string, b []byte) {
		for _, rc := range rangeCases {
			lo, hi := rc[0], rc[1]
			want := refIndexNotInRange(b, lo, hi)
			if len(b) > 0 {
				if got := indexNotInRangeGeneric(b, lo, hi); got != want {
					t.Fatalf("%s [%#x,%#x] generic: got %d want %d", in, lo, hi, got, want)
				}
			}
			forEachLevel(t, func(l Level) {
				if got := IndexNotInRange(b, lo, hi); got != want {
					t.Fatalf("%s [%#x,%#x] %v: got %d want %d", in, lo, hi, l, got, want)
				}
			})
		}
	})
}

func TestRangeHelpers(t *testing.T) {
	forEachLevel(t, func(l Level) {
		for _, tc := range []struct {
			in          string
			nonASCII    int
			ctlNonASCII int
		}{
			{"", -1, -1},
			{"plain text", -1, -1},
			{"tab\there", -1, 3},
			{"del\x7f", -1, 3},
			{"caf\xc3\xa9", 3, 3},
			{strings.Repeat("x", 100) + "\x80", 100, 100},
			{strings.Repeat("y", 70) + "\x1f" + "\xff", 71, 70},
		} {
			if got := IndexNonASCII([]byte(tc.in)); got != tc.nonASCII {
				t.Errorf("%v IndexNonASCII(%q) = %d, want %d", l, tc.in, got, tc.nonASCII)
			}
			if got := ValidASCII([]byte(tc.in)); got != (tc.nonASCII < 0) {
				t.Errorf("%v ValidASCII(%q) = %v", l, tc.in, got)
			}
			if got := ValidASCIIString(tc.in); got != (tc.nonASCII < 0) {
				t.Errorf("%v ValidASCIIString(%q) = %v", l, tc.in, got)
			}
			if got := IndexControlOrNonASCII([]byte(tc.in)); got != tc.ctlNonASCII {
				t.Errorf("%v IndexControlOrNonASCII(%q) = %d, want %d", l, tc.in, got, tc.ctlNonASCII)
			}
		}
		if got := IndexNotInRange([]byte("abc"), 'z', 'a'); got != 0 {
			t.Errorf("%v empty range: got %d, want 0", l, got)
		}
	})
}

func TestToLower(t *testing.T) {
	forEachInput(t, func(t *testing.T, in string, b []byte) {
		want := refToLower(b)
		dst := make([]byte, len(b)+1)
		dst[len(b)] = 0xaa
		if len(b) > 0 {
			toLowerGeneric(dst[:len(b)], b)
			if !slices.Equal(dst[:len(b)], want) {
				t.Fatalf("%s generic: got %q want %q", in, dst[:len(b)], want)
			}
		}
		forEachLevel(t, func(l Level) {
			clear(dst[:len(b)])
			if n := ToLower(dst, b); n != len(b) || !slices.Equal(dst[:n], want) {
				t.Fatalf("%s %v: got %q want %q", in, l, dst[:len(b)], want)
			}
			if dst[len(b)] != 0xaa {
				t.Fatalf("%s %v: wrote past len(src)", in, l)
			}
			inPlace := slices.Clone(b)
			ToLowerInPlace(inPlace)
			if !slices.Equal(inPlace, want) {
				t.Fatalf("%s %v in place: got %q want %q", in, l, inPlace, want)
			}
		})
	})
}

func TestPrefixSum(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	forEachInput(t, func(t *testing.T, in string, b []byte) {
		carry := uint32(r.Uint32())
		// Derive 8/16/32-bit inputs of the same element count from b.
		s8 := slices.Clone(b)
		s16 := make([]uint16, len(b))
		s32 := make([]uint32, len(b))
		for i, v := range b {
			s16[i] = uint16(v)<<8 | uint16(v^0x5a)
			s32[i] = uint32(v)<<24 | uint32(v)*0x10101 ^ uint32(i)
		}
		for _, excl := range []bool{false, true} {
			checkPrefix(t, in, s8, uint8(carry), excl, PrefixSum8, ExclusivePrefixSum8)
			checkPrefix(t, in, s16, uint16(carry), excl, PrefixSum16, ExclusivePrefixSum16)
			checkPrefix(t, in, s32, carry, excl, PrefixSum32, ExclusivePrefixSum32)
		}
	})
}

func checkPrefix[T uint8 | uint16 | uint32](t testing.TB, in string, src []T, carry T, excl bool,
	incl, exclf func(dst, src []T, carry T) T) {
	t.Helper()
	want, wantCarry := refPrefixSum(src, carry, excl)
	f := incl
	if excl {
		f = exclf
	}
	dst := make([]T, len(src)+1)
	dst[len(src)] = 0x55
	if got := prefixSumGeneric(dst[:len(src)], src, carry, excl); got != wantCarry || !slices.Equal(dst[:len(src)], want) {
		t.Fatalf("%s excl=%v %T generic: carry %d want %d", in, excl, carry, got, wantCarry)
	}
	forEachLevel(t, func(l Level) {
		clear(dst[:len(src)])
		if got := f(dst, src, carry); got != wantCarry || !slices.Equal(dst[:len(src)], want) {
			t.Fatalf("%s excl=%v %T %v: carry %d want %d\n got %v\nwant %v", in, excl, carry, l, got, wantCarry, dst[:len(src)], want)
		}
		if dst[len(src)] != 0x55 {
			t.Fatalf("%s excl=%v %T %v: wrote past len(src)", in, excl, carry, l)
		}
		inPlace := slices.Clone(src)
		if got := f(inPlace, inPlace, carry); got != wantCarry || !slices.Equal(inPlace, want) {
			t.Fatalf("%s excl=%v %T %v in place: wrong", in, excl, carry, l)
		}
	})
}

// TestPrefixSumLong covers what the 0..300 sweep cannot: the windowed
// loop starts only after the first vector and windowMinVectors more (576
// bytes for 8-bit AVX-512 lanes), so this sweeps element counts around
// every multiple of a vector up to 24 zmm vectors, at a few start offsets,
// with checkPrefix's separate dst and in place.
func TestPrefixSumLong(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, width := range []int{1, 2, 4} {
		per := 64 / width // elements per zmm vector
		for k := 0; k <= 24; k++ {
			for _, d := range []int{-1, 0, 1, per / 2} {
				n := k*per + d
				if n < 0 {
					continue
				}
				for _, off := range []int{0, 1, 3} {
					b := make([]byte, n+off)
					for i := range b {
						b[i] = byte(r.Uint32())
					}
					b = b[off:]
					in := fmt.Sprintf("width=%d/len=%d/off=%d", width, n, off)
					carry := r.Uint32()
					for _, excl := range []bool{false, true} {
						switch width {
						case 1:
							checkPrefix(t, in, b, uint8(carry), excl, PrefixSum8, ExclusivePrefixSum8)
						case 2:
							s16 := make([]uint16, n)
							for i, v := range b {
								s16[i] = uint16(v)*0x0101 ^ uint16(i)
							}
							checkPrefix(t, in, s16, uint16(carry), excl, PrefixSum16, ExclusivePrefixSum16)
						case 4:
							s32 := make([]uint32, n)
							for i, v := range b {
								s32[i] = uint32(v)*0x01010101 ^ uint32(i)<<7
							}
							checkPrefix(t, in, s32, carry, excl, PrefixSum32, ExclusivePrefixSum32)
						}
					}
				}
			}
		}
	}
}

func TestPrefixSumShortDst(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("PrefixSum32 with a short dst did not panic")
		}
	}()
	PrefixSum32(make([]uint32, 1), make([]uint32, 2), 0)
}

func TestSetLevel(t *testing.T) {
	prev := SetLevel(AVX512 + 1)
	defer SetLevel(prev)
	if Active() != detected {
		t.Errorf("SetLevel above the CPU's level: active %v, want %v", Active(), detected)
	}
	ls := Levels()
	if ls[0] != Generic || ls[len(ls)-1] != detected {
		t.Errorf("Levels() = %v, detected %v", ls, detected)
	}
	for _, l := range ls {
		SetLevel(l)
		if Active() != l {
			t.Errorf("SetLevel(%v): active %v", l, Active())
		}
	}
	for l, s := range map[Level]string{Generic: "generic", AVX2: "avx2", AVX512: "avx512", 9: "unknown"} {
		if l.String() != s {
			t.Errorf("Level(%d).String() = %q", l, l.String())
		}
	}
}
