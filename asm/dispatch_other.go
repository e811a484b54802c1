//go:build !amd64 || purego || noasm

package asm

// Builds without assembly: every kernel is its pure-Go twin.

func classify(dst []uint64, src []byte, t *ClassTable) { classifyGeneric(dst, src, t) }

func prefixSum8(dst, src []uint8, carry uint8, excl bool) uint8 {
	return prefixSumGeneric(dst, src, carry, excl)
}

func prefixSum16(dst, src []uint16, carry uint16, excl bool) uint16 {
	return prefixSumGeneric(dst, src, carry, excl)
}

func prefixSum32(dst, src []uint32, carry uint32, excl bool) uint32 {
	return prefixSumGeneric(dst, src, carry, excl)
}

func indexTabNewline(b []byte) int { return indexTabNewlineGeneric(b) }

func indexNotInRange(b []byte, lo, hi byte) int { return indexNotInRangeGeneric(b, lo, hi) }

func toLower(dst, src []byte) { toLowerGeneric(dst, src) }

func validUTF8(b []byte) bool { return validUTF8Generic(b) }

func jsonIndex(pos []uint32, masks []uint64, src []byte, base uint32, c *JSONCarry) int {
	return jsonIndexGeneric(pos, masks, src, base, &c.s)
}
