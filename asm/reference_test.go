package asm

// Naive byte-at-a-time references. They are the independent oracle: the
// pure-Go twins are tested against them, and every SIMD path against the
// twins, so a bug in a twin cannot hide behind agreement.

func refClassify(src []byte, classes []func(byte) bool) []uint64 {
	n := len(classes)
	out := make([]uint64, ClassifiedLen(len(src), n))
	for i, b := range src {
		for c, in := range classes {
			if in(b) {
				out[i/BlockSize*n+c] |= 1 << (i % BlockSize)
			}
		}
	}
	return out
}

func refPrefixSum[T uint8 | uint16 | uint32](src []T, carry T, excl bool) ([]T, T) {
	out := make([]T, len(src))
	for i, v := range src {
		if excl {
			out[i] = carry
			carry += v
		} else {
			carry += v
			out[i] = carry
		}
	}
	return out, carry
}

func refIndexTabNewline(b []byte) int {
	for i, c := range b {
		if c == 9 || c == 10 || c == 13 {
			return i
		}
	}
	return -1
}

func refIndexNotInRange(b []byte, lo, hi byte) int {
	for i, c := range b {
		if c < lo || c > hi {
			return i
		}
	}
	return -1
}

func refToLower(b []byte) []byte {
	out := make([]byte, len(b))
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			c += 32
		}
		out[i] = c
	}
	return out
}
