package asm

import (
	"encoding/binary"
	"math/bits"
)

const (
	highBits = 0x8080808080808080
)

// zeroBytes returns a word with bit 7 of byte i set if byte i of x is zero.
// Bits above the lowest set one may be false positives (a borrow from a zero
// byte), but the lowest set bit is always exact, which is all callers use.
func zeroBytes(x uint64) uint64 { return (x - lowBits) &^ x & highBits }

// indexTabNewlineGeneric is the pure-Go twin of the tab/newline kernels: it
// tests eight bytes at a time for each of the three values with the
// classic "has zero byte" word trick. len(b) > 0.
func indexTabNewlineGeneric(b []byte) int {
	i := 0
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		m := zeroBytes(x^(lowBits*'\t')) | zeroBytes(x^(lowBits*'\n')) | zeroBytes(x^(lowBits*'\r'))
		if m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	for ; i < len(b); i++ {
		if c := b[i]; c == '\t' || c == '\n' || c == '\r' {
			return i
		}
	}
	return -1
}

// indexNotInRangeGeneric is the pure-Go twin of the range kernels.
// len(b) > 0 and lo <= hi. The common all-ASCII check (lo == 0, hi ==
// 0x7f) tests eight bytes at a time.
func indexNotInRangeGeneric(b []byte, lo, hi byte) int {
	i := 0
	if lo == 0 && hi == 0x7f {
		for ; i+8 <= len(b); i += 8 {
			if m := binary.LittleEndian.Uint64(b[i:]) & highBits; m != 0 {
				return i + bits.TrailingZeros64(m)/8
			}
		}
	}
	span := hi - lo
	for ; i < len(b); i++ {
		if b[i]-lo > span {
			return i
		}
	}
	return -1
}
