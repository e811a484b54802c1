package asm

import "encoding/binary"

// toLowerWord lower-cases the ASCII letters of eight bytes at once. Adding
// to the low seven bits of each byte never carries into the next byte, so
// bit 7 of a byte of ge (le) says whether it is >= 'A' (> 'Z').
func toLowerWord(x uint64) uint64 {
	x7 := x &^ highBits
	ge := x7 + lowBits*(0x80-'A')
	gt := x7 + lowBits*(0x80-'Z'-1)
	upper := ge &^ gt &^ x & highBits
	return x | upper>>2 // 0x80 >> 2 == 0x20, the case bit
}

// toLowerGeneric is the pure-Go twin of the lower-casing kernels.
// len(dst) == len(src) > 0.
func toLowerGeneric(dst, src []byte) {
	dst = dst[:len(src)]
	i := 0
	for ; i+8 <= len(src); i += 8 {
		binary.LittleEndian.PutUint64(dst[i:], toLowerWord(binary.LittleEndian.Uint64(src[i:])))
	}
	for ; i < len(src); i++ {
		c := src[i]
		if c-'A' < 26 {
			c += 'a' - 'A'
		}
		dst[i] = c
	}
}
