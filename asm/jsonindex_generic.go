package asm

import "math/bits"

// JSON byte classes of jsonIndexGeneric, as bits of jsonClassOf.
const (
	jsonClassQuote = 1 << iota
	jsonClassBack
	jsonClassCtl
	jsonClassSpace
	jsonClassOp
)

// jsonClassOf holds the classes of each byte for jsonIndexGeneric.
var jsonClassOf = func() (t [256]uint8) {
	for c := 0; c < 0x20; c++ {
		t[c] = jsonClassCtl
	}
	t['"'] = jsonClassQuote
	t['\\'] = jsonClassBack
	for _, c := range []byte(" \t\n\r") {
		t[c] |= jsonClassSpace
	}
	for _, c := range []byte("{}[]:,") {
		t[c] = jsonClassOp
	}
	return t
}()

// jsonIndexGeneric is the pure-Go twin of the JSONIndex kernels, with their
// contract: whole 64-byte blocks, at least one.
func jsonIndexGeneric(pos []uint32, masks []uint64, src []byte, base uint32, c *[4]uint64) int {
	escCarry, strCarry, scalarCarry, plainCarry := c[0], c[1], c[2], c[3]
	n := 0
	for len(src) >= BlockSize && len(masks) >= JSONMaskWords {
		var quote, backCtl, back, space, op uint64
		for i, b := range src[:BlockSize] {
			k, bit := jsonClassOf[b], uint64(1)<<i
			if k&jsonClassQuote != 0 {
				quote |= bit
			}
			if k&jsonClassBack != 0 {
				back |= bit
			}
			if k&(jsonClassBack|jsonClassCtl) != 0 {
				backCtl |= bit
			}
			if k&jsonClassSpace != 0 {
				space |= bit
			}
			if k&jsonClassOp != 0 {
				op |= bit
			}
		}
		masks[JSONStops] = quote | backCtl
		if back|escCarry != 0 { // rare: most blocks have no backslash
			var esc uint64
			esc, escCarry = jsonEscaped(back, escCarry)
			quote &^= esc
		}
		inStr := prefixXor(quote) ^ strCarry
		strCarry = uint64(int64(inStr) >> 63)
		// Each string's opening quote (or the carry of one that goes on
		// from the block before) added to the inside of the strings
		// without their specials carries to the closing quote only
		// through a run with no special.
		sum, co := bits.Add64(inStr&^backCtl, quote&inStr|plainCarry, 0)
		masks[JSONPlainEnds] = sum & quote &^ inStr
		plainCarry = co
		scalar := ^(space | op | quote | inStr)
		st := op&^inStr | quote&inStr | scalar&^(scalar<<1|scalarCarry)
		scalarCarry = scalar >> 63
		for st != 0 {
			pos[n] = base + uint32(bits.TrailingZeros64(st))
			n++
			st &= st - 1
		}
		src, masks, base = src[BlockSize:], masks[JSONMaskWords:], base+BlockSize
	}
	c[0], c[1], c[2], c[3] = escCarry, strCarry, scalarCarry, plainCarry
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
