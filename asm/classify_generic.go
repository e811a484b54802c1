package asm

import "encoding/binary"

const (
	lowBits = 0x0101010101010101
	// packBits gathers bit 0 of each byte of a word into the top byte when
	// multiplied with it: byte i's bit lands on bit 56+i, and no two partial
	// products share a position, so nothing carries into the result.
	packBits = 0x0102040810204080
)

// classifyGeneric is the pure-Go twin of the Classify kernels. len(dst) is
// exactly ClassifiedLen(len(src), t.n) and len(src) > 0.
//
// It looks each byte up in t.lut, gathers eight lookups into a word and
// extracts each class with one multiply, so it costs about one table load
// and a few ALU operations per byte instead of one branch per byte and class.
func classifyGeneric(dst []uint64, src []byte, t *ClassTable) {
	n := t.n
	for len(src) > 0 {
		blk := src
		if len(blk) > BlockSize {
			blk = blk[:BlockSize]
		}
		src = src[len(blk):]
		var m [MaxClasses]uint64
		var tail [8]byte
		for shift := uint(0); len(blk) > 0; shift += 8 {
			var w uint64
			if len(blk) >= 8 {
				w = uint64(t.lut[blk[0]]) | uint64(t.lut[blk[1]])<<8 |
					uint64(t.lut[blk[2]])<<16 | uint64(t.lut[blk[3]])<<24 |
					uint64(t.lut[blk[4]])<<32 | uint64(t.lut[blk[5]])<<40 |
					uint64(t.lut[blk[6]])<<48 | uint64(t.lut[blk[7]])<<56
				blk = blk[8:]
			} else {
				// Bytes past the end classify as "no class".
				for i, b := range blk {
					tail[i] = t.lut[b]
				}
				w = binary.LittleEndian.Uint64(tail[:])
				blk = nil
			}
			for c := 0; c < n; c++ {
				m[c] |= ((w >> c) & lowBits) * packBits >> 56 << shift
			}
		}
		copy(dst[:n], m[:n])
		dst = dst[n:]
	}
}
