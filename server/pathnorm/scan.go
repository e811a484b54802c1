package pathnorm

import (
	"encoding/binary"
	"math/bits"
)

// scan finds where the path of an origin-form target t ends (its first
// '?' or '#', else len(t)) and whether t[:end] is Clean, in one pass of
// eight bytes at a time (SWAR): this is all a plain request pays for
// normalisation. Byte loops cost 18 ns of a ~300 ns plain request for
// "/healthz" (6 % in the profile of BenchmarkServeStaticCPU, AMD EPYC,
// Go 1.26); asm's class-table kernels start paying only past 64 bytes,
// longer than most paths. FuzzScan checks it against Clean and a byte
// loop.
func scan(t []byte) (end int, clean bool) {
	// carry is 0x80 when the previous word ended with '/': byte 0 of
	// the next one is that slash's successor.
	var carry uint64
	for i := 0; i < len(t); i += 8 {
		var w uint64
		if i+8 <= len(t) {
			w = binary.LittleEndian.Uint64(t[i:])
		} else {
			// The tail, padded with NUL, which is none of the bytes
			// looked for (and which the parsers refuse in targets).
			var b [8]byte
			copy(b[:], t[i:])
			w = binary.LittleEndian.Uint64(b[:])
		}
		stop := eq(w, '?') | eq(w, '#')
		slash := eq(w, '/')
		succ := slash | eq(w, '.') // what makes a preceding '/' dirty
		bad := eq(w, '%') | slash&(succ>>8) | carry&succ
		carry = slash >> 56
		if stop|bad == 0 {
			continue
		}
		if stop != 0 {
			// Only what precedes the first '?' is path: the bits
			// below its byte's.
			low := stop & -stop
			return i + bits.TrailingZeros64(stop)/8, bad&(low-1) == 0
		}
		return i + endOf(t[i:]), false
	}
	return len(t), true
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
