//go:build !purego && !noasm

package asm

// Dispatch to the generated kernels. Each wrapper switches on active, a
// variable set once at init (and by the SetLevel test hook), so the branch
// is perfectly predicted and the wrappers stay small enough to inline.
//
// The AVX2 kernels that write (prefix sums, ToLower) only handle whole
// 32-byte vectors or inputs of at least 32 bytes, because AVX2 has no
// byte-granular masked store; the pure-Go twin finishes the remainder.
// AVX-512 kernels handle every length with masked loads and stores.

// avx2Vector is the number of bytes in one AVX2 vector.
const avx2Vector = 32

func classify(dst []uint64, src []byte, t *ClassTable) {
	switch active {
	case AVX512:
		classifyAVX512(dst, src, &t.k, t.n)
	case AVX2:
		classifyAVX2(dst, src, &t.k, t.n)
	default:
		classifyGeneric(dst, src, t)
	}
}

func jsonIndex(pos []uint32, masks []uint64, src []byte, base uint32, c *JSONCarry) int {
	switch active {
	case AVX512:
		if jsonVBMI2 {
			return jsonIndexVBMI2(pos, masks, src, base, &c.s)
		}
		return jsonIndexAVX512(pos, masks, src, base, &c.s)
	case AVX2:
		return jsonIndexAVX2(pos, masks, src, base, &c.s)
	}
	return jsonIndexGeneric(pos, masks, src, base, &c.s)
}

func prefixSum8(dst, src []uint8, carry uint8, excl bool) uint8 {
	switch active {
	case AVX512:
		if excl {
			return prefixSum8ExclAVX512(dst, src, carry)
		}
		return prefixSum8InclAVX512(dst, src, carry)
	case AVX2:
		v := len(src) &^ (avx2Vector - 1)
		if v > 0 {
			if excl {
				carry = prefixSum8ExclAVX2(dst[:v], src[:v], carry)
			} else {
				carry = prefixSum8InclAVX2(dst[:v], src[:v], carry)
			}
		}
		return prefixSumGeneric(dst[v:], src[v:], carry, excl)
	}
	return prefixSumGeneric(dst, src, carry, excl)
}

func prefixSum16(dst, src []uint16, carry uint16, excl bool) uint16 {
	switch active {
	case AVX512:
		if excl {
			return prefixSum16ExclAVX512(dst, src, carry)
		}
		return prefixSum16InclAVX512(dst, src, carry)
	case AVX2:
		v := len(src) &^ (avx2Vector/2 - 1)
		if v > 0 {
			if excl {
				carry = prefixSum16ExclAVX2(dst[:v], src[:v], carry)
			} else {
				carry = prefixSum16InclAVX2(dst[:v], src[:v], carry)
			}
		}
		return prefixSumGeneric(dst[v:], src[v:], carry, excl)
	}
	return prefixSumGeneric(dst, src, carry, excl)
}

func prefixSum32(dst, src []uint32, carry uint32, excl bool) uint32 {
	switch active {
	case AVX512:
		if excl {
			return prefixSum32ExclAVX512(dst, src, carry)
		}
		return prefixSum32InclAVX512(dst, src, carry)
	case AVX2:
		v := len(src) &^ (avx2Vector/4 - 1)
		if v > 0 {
			if excl {
				carry = prefixSum32ExclAVX2(dst[:v], src[:v], carry)
			} else {
				carry = prefixSum32InclAVX2(dst[:v], src[:v], carry)
			}
		}
		return prefixSumGeneric(dst[v:], src[v:], carry, excl)
	}
	return prefixSumGeneric(dst, src, carry, excl)
}

func indexTabNewline(b []byte) int {
	switch active {
	case AVX512:
		return indexTabNewlineAVX512(b)
	case AVX2:
		return indexTabNewlineAVX2(b)
	}
	return indexTabNewlineGeneric(b)
}

func indexNotInRange(b []byte, lo, hi byte) int {
	switch active {
	case AVX512:
		return indexNotInRangeAVX512(b, lo, hi)
	case AVX2:
		return indexNotInRangeAVX2(b, lo, hi)
	}
	return indexNotInRangeGeneric(b, lo, hi)
}

func toLower(dst, src []byte) {
	switch {
	case active == AVX512:
		toLowerAVX512(dst, src)
	case active == AVX2 && len(src) >= avx2Vector:
		toLowerAVX2(dst, src)
	default:
		toLowerGeneric(dst, src)
	}
}

func validUTF8(b []byte) bool {
	switch active {
	case AVX512:
		return validUTF8AVX512(b)
	case AVX2:
		return validUTF8AVX2(b)
	}
	return validUTF8Generic(b)
}
