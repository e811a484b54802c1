package asm

// Prefix sums over unsigned lanes, with wrapping (modular) arithmetic.
//
// The inclusive forms set dst[i] = carry + src[0] + ... + src[i]; the
// exclusive forms set dst[i] = carry + src[0] + ... + src[i-1]. Both return
// carry plus the sum of all of src, which is the carry to pass with the next
// block of a longer sequence. dst must be at least as long as src (else they
// panic) and may be src itself; partially overlapping slices give undefined
// results.
//
// The SIMD kernels scan the first vector with the shift-and-add network
// (log2(lanes) steps of "shift by 1, 2, 4... lanes and add", then the
// running carry broadcast and added). The later vectors, when dst is not
// src, take the windowed scan: each output vector is the sum of the last
// lanes-many inputs at every position plus the previous output vector, so
// no carry is broadcast and the loop-carried work is one add per vector.

// PrefixSum8 computes the inclusive prefix sum of src into dst.
func PrefixSum8(dst, src []uint8, carry uint8) uint8 {
	checkDst(len(dst), len(src))
	return prefixSum8(dst[:len(src)], src, carry, false)
}

// ExclusivePrefixSum8 computes the exclusive prefix sum of src into dst.
func ExclusivePrefixSum8(dst, src []uint8, carry uint8) uint8 {
	checkDst(len(dst), len(src))
	return prefixSum8(dst[:len(src)], src, carry, true)
}

// PrefixSum16 computes the inclusive prefix sum of src into dst.
func PrefixSum16(dst, src []uint16, carry uint16) uint16 {
	checkDst(len(dst), len(src))
	return prefixSum16(dst[:len(src)], src, carry, false)
}

// ExclusivePrefixSum16 computes the exclusive prefix sum of src into dst.
func ExclusivePrefixSum16(dst, src []uint16, carry uint16) uint16 {
	checkDst(len(dst), len(src))
	return prefixSum16(dst[:len(src)], src, carry, true)
}

// PrefixSum32 computes the inclusive prefix sum of src into dst.
func PrefixSum32(dst, src []uint32, carry uint32) uint32 {
	checkDst(len(dst), len(src))
	return prefixSum32(dst[:len(src)], src, carry, false)
}

// ExclusivePrefixSum32 computes the exclusive prefix sum of src into dst.
func ExclusivePrefixSum32(dst, src []uint32, carry uint32) uint32 {
	checkDst(len(dst), len(src))
	return prefixSum32(dst[:len(src)], src, carry, true)
}

func checkDst(nd, ns int) {
	if nd < ns {
		panic("asm: dst shorter than src")
	}
}
