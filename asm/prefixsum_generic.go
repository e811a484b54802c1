package asm

// prefixSumGeneric is the pure-Go twin of the prefix-sum kernels for every
// lane width. len(dst) == len(src).
func prefixSumGeneric[T uint8 | uint16 | uint32](dst, src []T, carry T, exclusive bool) T {
	dst = dst[:len(src)]
	if exclusive {
		for i, v := range src {
			dst[i] = carry
			carry += v
		}
		return carry
	}
	for i, v := range src {
		carry += v
		dst[i] = carry
	}
	return carry
}
