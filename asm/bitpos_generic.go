package asm

import "math/bits"

// bitPositionsGeneric is the pure-Go twin of the BitPositions kernels; the
// contract is BitPositions' with len(masks) > 0.
func bitPositionsGeneric(dst []uint32, masks []uint64, base uint32) int {
	n := 0
	for _, w := range masks {
		for w != 0 {
			dst[n] = base + uint32(bits.TrailingZeros64(w))
			n++
			w &= w - 1
		}
		base += BlockSize
	}
	return n
}
