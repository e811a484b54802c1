package asm

import (
	"slices"
	"testing"
)

// The fuzz targets compare every level's kernel with the pure-Go twin and
// the naive reference on arbitrary bytes, starting at an arbitrary offset
// (so vector loads see every alignment).

func fuzzSeeds(f *testing.F) {
	f.Add([]byte("GET /index.html HTTP/1.1\r\nHost: example.com\r\n\r\n"), uint8(0))
	f.Add([]byte("https://Example.COM/a\tb\nc"), uint8(3))
	f.Add(slices.Repeat([]byte{0x00, 0x7f, 0x80, 0xff}, 40), uint8(1))
	f.Add(edgeBytes, uint8(63))
	f.Add([]byte{}, uint8(0))
}

func fuzzInput(data []byte, off uint8) []byte {
	o := int(off) % 64
	buf := make([]byte, o+len(data))
	copy(buf[o:], data)
	return buf[o:]
}

func FuzzClassify(f *testing.F) {
	fuzzSeeds(f)
	// The kernels run one loop per class count; these cover 1, 2, 6
	// and 8 classes (parse/http's head table has 2).
	tabs := [][]func(byte) bool{testTables["http"], testTables["tchar"], testTables["eight"], testTables["highlow"]}
	f.Fuzz(func(t *testing.T, data []byte, off uint8) {
		b := fuzzInput(data, off)
		for _, cs := range tabs {
			tab := MustClassTable(cs...)
			want := refClassify(b, cs)
			got := make([]uint64, len(want))
			forEachLevel(t, func(l Level) {
				clear(got)
				Classify(got, b, tab)
				if !slices.Equal(got, want) {
					t.Fatalf("%v: got %x want %x", l, got, want)
				}
			})
		}
	})
}

func FuzzScan(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte, off uint8) {
		b := fuzzInput(data, off)
		lo, hi := off, off|0x3f
		forEachLevel(t, func(l Level) {
			if got, want := IndexTabNewline(b), refIndexTabNewline(b); got != want {
				t.Fatalf("%v IndexTabNewline: got %d want %d", l, got, want)
			}
			if got, want := IndexNotInRange(b, lo, hi), refIndexNotInRange(b, lo, hi); got != want {
				t.Fatalf("%v IndexNotInRange(%#x,%#x): got %d want %d", l, lo, hi, got, want)
			}
			if got, want := IndexControlOrNonASCII(b), refIndexNotInRange(b, 0x20, 0x7e); got != want {
				t.Fatalf("%v IndexControlOrNonASCII: got %d want %d", l, got, want)
			}
		})
	})
}

func FuzzToLower(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte, off uint8) {
		b := fuzzInput(data, off)
		want := refToLower(b)
		dst := make([]byte, len(b))
		forEachLevel(t, func(l Level) {
			ToLower(dst, b)
			if !slices.Equal(dst, want) {
				t.Fatalf("%v: got %q want %q", l, dst, want)
			}
		})
	})
}

func FuzzPrefixSum(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte, off uint8) {
		b := fuzzInput(data, off)
		u16 := make([]uint16, len(b)/2)
		for i := range u16 {
			u16[i] = uint16(b[2*i]) | uint16(b[2*i+1])<<8
		}
		u32 := make([]uint32, len(b)/4)
		for i := range u32 {
			u32[i] = uint32(b[4*i]) | uint32(b[4*i+1])<<8 | uint32(b[4*i+2])<<16 | uint32(b[4*i+3])<<24
		}
		for _, excl := range []bool{false, true} {
			checkPrefix(t, "fuzz", b, off, excl, PrefixSum8, ExclusivePrefixSum8)
			checkPrefix(t, "fuzz", u16, uint16(off)*257, excl, PrefixSum16, ExclusivePrefixSum16)
			checkPrefix(t, "fuzz", u32, uint32(off)*0x01010101, excl, PrefixSum32, ExclusivePrefixSum32)
		}
	})
}
