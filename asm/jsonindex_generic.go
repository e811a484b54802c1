package asm

import "math/bits"

// jsonStructuralsGeneric is the pure-Go twin of the JSONStructurals
// kernels, with its contract and at least one block.
func jsonStructuralsGeneric(pos []uint32, masks, cls []uint64, base uint32, c *[3]uint64) int {
	escCarry, strCarry, scalarCarry := c[0], c[1], c[2]
	n := 0
	for len(cls) >= JSONClasses && len(masks) >= JSONMaskWords {
		quote, back, stop, space, op := cls[0], cls[1], cls[2], cls[3], cls[4]
		if back|escCarry != 0 { // rare: most blocks have no backslash
			var esc uint64
			esc, escCarry = jsonEscaped(back, escCarry)
			quote &^= esc
		}
		inStr := prefixXor(quote) ^ strCarry
		strCarry = uint64(int64(inStr) >> 63)
		masks[JSONStops] = stop
		masks[JSONSpecials] = stop &^ cls[0] & inStr
		scalar := ^(space | op | quote | inStr)
		st := op&^inStr | quote&inStr | scalar&^(scalar<<1|scalarCarry)
		scalarCarry = scalar >> 63
		for st != 0 {
			pos[n] = base + uint32(bits.TrailingZeros64(st))
			n++
			st &= st - 1
		}
		cls, masks, base = cls[JSONClasses:], masks[JSONMaskWords:], base+BlockSize
	}
	c[0], c[1], c[2] = escCarry, strCarry, scalarCarry
	return n
}

// prefixXor returns x with bit i set to the parity of bits 0..i of x (the
// kernels use a carry-less multiplication by all ones).
func prefixXor(x uint64) uint64 {
	x ^= x << 1
	x ^= x << 2
	x ^= x << 4
	x ^= x << 8
	x ^= x << 16
	x ^= x << 32
	return x
}

// jsonEscaped returns the bytes of a block that follow an escaping
// backslash, given its backslashes bs and carry (bit 0: the first byte is
// escaped), and the carry for the next block. The loop visits each
// escaping backslash once.
func jsonEscaped(bs, carry uint64) (esc, next uint64) {
	esc = carry
	bs &^= carry
	for bs != 0 {
		p := uint(bits.TrailingZeros64(bs))
		if p == BlockSize-1 {
			return esc, 1
		}
		esc |= 1 << (p + 1)
		bs &^= 3 << p
	}
	return esc, 0
}
