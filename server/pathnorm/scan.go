package pathnorm

import (
	"encoding/binary"
	"math/bits"
)

// scan finds where the path of an origin-form target t ends (its first
// '?' or '#', else len(t)) and whether t[:end] is Clean, in one pass of
// eight bytes at a time (SWAR): this is all a plain request pays for
// normalisation. A byte-at-a-time loop cost 45 ns for a 45-byte target
// (AMD EPYC, Go 1.26), a measurable share of a ~1 µs plain route; asm's
// class-table kernels start paying only past 64 bytes, longer than most
// paths. FuzzScan checks it against Clean and a byte loop.
func scan(t []byte) (end int, clean bool) {
	i := 0
	// Each word w is compared with the word one byte later (w1), so a
	// '/' in the last byte of w sees its successor.
	for ; i+9 <= len(t); i += 8 {
		w := binary.LittleEndian.Uint64(t[i:])
		w1 := binary.LittleEndian.Uint64(t[i+1:])
		stop := eq(w, '?') | eq(w, '#')
		bad := eq(w, '%') | eq(w, '/')&(eq(w1, '/')|eq(w1, '.'))
		if stop|bad == 0 {
			continue
		}
		if stop != 0 {
			low := stop & -stop
			// Only what precedes the '?' is path; a "/" just
			// before it sees '?', which is neither '/' nor '.'.
			return i + bits.TrailingZeros64(stop)/8, bad&(low-1) == 0
		}
		return i + endOf(t[i:]), false
	}
	clean = true
	for ; i < len(t); i++ {
		switch t[i] {
		case '?', '#':
			return i, clean
		case '%':
			clean = false
		case '/':
			if i+1 < len(t) && (t[i+1] == '/' || t[i+1] == '.') {
				clean = false
			}
		}
	}
	return i, clean
}

// endOf is the index of the first '?' or '#' in t, or len(t).
func endOf(t []byte) int {
	for i, c := range t {
		if c == '?' || c == '#' {
			return i
		}
	}
	return len(t)
}

const (
	ones  = 0x0101010101010101
	low7  = 0x7f7f7f7f7f7f7f7f
	highs = 0x8080808080808080
)

// eq sets the high bit of each byte of w that equals c, exactly: adding
// 0x7f to the low seven bits carries into bit 7 unless they are all
// zero, and never into the next byte (no false positives, unlike the
// shorter haszero trick, whose borrows mark bytes above a match).
func eq(w uint64, c byte) uint64 {
	y := w ^ ones*uint64(c)
	return ^((y&low7 + low7) | y) & highs
}
