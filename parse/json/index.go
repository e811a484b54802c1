package json

import (
	"math/bits"
	"slices"

	"github.com/simdedge/simdedge/asm"
)

// The structural index: a first stage in the manner of simdjson, used where
// marks pay (marks.go) for whole documents. asm.Classify turns each window
// of the input into class masks; a few word operations per 64-byte block
// then find the escaped bytes, the bytes inside strings and, from these, the
// structural positions: operators outside strings, opening quotes, and the
// first byte of every other run of non-whitespace outside strings (numbers,
// literals, or stray bytes). asm.BitPositions turns those masks into a
// []uint32 of offsets, in order.
//
// Why: in the marks engine every position depends on the one before it
// (the end of a string is found from its start, the next token from that
// end), so each token costs the latency of a chain of loads. The second
// stage (build_index.go) takes each token's position from the index
// instead, a load that does not depend on parsing the token before, so the
// CPU overlaps consecutive tokens. Measured on twitter.json (AMD EPYC Zen
// 4, Go 1.26, see bench/results/parsers-json-*.md).
//
// The index is only a guide: the second stage still checks every token's
// bytes, and gives up (falling back to the marks engine, which gives the
// verdict and the error offset) at the first thing that is not a valid
// document. The index only has to be exact for valid documents.

// Index classes, in the order of indexTable.
const (
	idxQuote   = 0
	idxBack    = 1
	idxStop    = 2 // markStop's bytes: '"', '\\' and C0 controls
	idxSpace   = 3
	idxOp      = 4
	idxClasses = 5
	// idxSpecial is the slot of index.mk that holds, instead of the
	// whitespace mask (which the second stage never reads), the
	// backslashes and control bytes inside strings: a string whose blocks
	// have none is plain, and its closing quote is the byte before the
	// next structural position when that byte is a quote (plain).
	idxSpecial = markSpace
	// indexTail is the number of sentinel entries after the last
	// structural position (each one len(b)).
	indexTail = 2
)

var indexTable = asm.MustClassTable(
	func(c byte) bool { return c == '"' },
	func(c byte) bool { return c == '\\' },
	func(c byte) bool { return c == '"' || c == '\\' || c < ' ' },
	jsonSpace,
	func(c byte) bool {
		return c == '{' || c == '}' || c == '[' || c == ']' || c == ':' || c == ','
	},
)

// index is the first stage's output for one document, reused by a Parser.
type index struct {
	// pos holds the structural positions, then indexTail copies of len(b).
	pos []uint32
	// mk holds the stop masks of the whole document, in the layout of
	// marks (one window spanning the input), for the string scans of the
	// second stage, and the specials (idxSpecial) in the second slot.
	mk marks
	// classes is Classify's output for one window, structural the
	// window's structural positions as one bit mask per block.
	classes    []uint64
	structural []uint64
}

// build fills x for b (len(b) > 0, at most DefaultMaxSize).
func (x *index) build(b []byte) {
	words := asm.ClassifiedLen(len(b), markClasses) + markClasses
	if cap(x.mk.buf) < words {
		x.mk.buf = make([]uint64, words)
	}
	masks := x.mk.buf[:words]
	x.mk.b, x.mk.buf, x.mk.base, x.mk.end = b, masks, 0, len(b)
	// The block after the last reads as zero (see marks.bits).
	masks[words-2], masks[words-1] = 0, 0
	if x.classes == nil {
		x.classes = make([]uint64, asm.ClassifiedLen(markWindow, idxClasses))
		x.structural = make([]uint64, markWindow/asm.BlockSize)
	}
	pos := x.pos[:0]
	var c carries
	for w := 0; w < len(b); w += markWindow {
		cls := x.classes[:asm.Classify(x.classes, b[w:min(w+markWindow, len(b))], indexTable)]
		st := x.structural[:len(cls)/idxClasses]
		c.structurals(st, masks[w>>blockShift*markClasses:], cls)
		if rest := (len(b) - w) & (asm.BlockSize - 1); rest != 0 && w+markWindow >= len(b) {
			st[len(st)-1] &= 1<<rest - 1 // Classify's zero bits past the end read as "scalar"
		}
		// BitPositions wants room for 64 per block.
		pos = slices.Grow(pos, len(st)*asm.BlockSize+indexTail)
		pos = pos[:len(pos)+asm.BitPositions(pos[len(pos):len(pos)+len(st)*asm.BlockSize], st, uint32(w))]
	}
	for range indexTail {
		pos = append(pos, uint32(len(b)))
	}
	x.pos = pos
}

// carries is what one block's analysis passes to the next.
type carries struct {
	esc    uint64 // bit 0: the block's first byte is escaped
	str    uint64 // all ones: the block starts inside a string
	scalar uint64 // bit 0: the byte before the block is a scalar byte
}

// structurals writes, for each block of cls (Classify's output with
// indexTable), its stop mask and its specials (see idxSpecial) into masks
// (marks' layout) and its structural positions as a bit mask into st. It is
// a loop of its own, apart from BitPositions, so that its state stays in
// registers.
func (c *carries) structurals(st, masks, cls []uint64) {
	escCarry, strCarry, scalarCarry := c.esc, c.str, c.scalar
	masks = masks[:len(st)*markClasses]
	cls = cls[:len(st)*idxClasses]
	for k := range st {
		w := cls[k*idxClasses : k*idxClasses+idxClasses : k*idxClasses+idxClasses]
		quote, space, op := w[idxQuote], w[idxSpace], w[idxOp]
		m := masks[k*markClasses : k*markClasses+markClasses : k*markClasses+markClasses]
		rawQuote := quote
		if back := w[idxBack]; back|escCarry != 0 { // rare: most blocks have no backslash
			var esc uint64
			esc, escCarry = escapedBits(back, escCarry)
			quote &^= esc
		}
		// inStr: from an opening quote (included) to its closing quote
		// (excluded).
		inStr := prefixXor(quote) ^ strCarry
		strCarry = uint64(int64(inStr) >> 63)
		m[markStop], m[idxSpecial] = w[idxStop], (w[idxStop]&^rawQuote)&inStr
		scalar := ^(space | op | quote | inStr)
		st[k] = op&^inStr | quote&inStr | scalar&^(scalar<<1|scalarCarry)
		scalarCarry = scalar >> 63
	}
	c.esc, c.str, c.scalar = escCarry, strCarry, scalarCarry
}

// plain reports whether the string from the opening quote at i to the
// closing quote at end (end > i) holds no backslash and no control byte,
// judged from the specials of the blocks of i and end; a string over more
// than two blocks is not judged (false), and its caller scans it.
func (x *index) plain(i, end int) bool {
	ki, ke := i>>blockShift, end>>blockShift
	buf := x.mk.buf
	return ke-ki <= 1 && buf[ki*markClasses+idxSpecial]|buf[ke*markClasses+idxSpecial] == 0
}

// prefixXor returns x with bit i set to the parity of bits 0..i of x: with
// x the unescaped quotes, the bytes from an opening quote up to (not
// including) its closing one.
func prefixXor(x uint64) uint64 {
	x ^= x << 1
	x ^= x << 2
	x ^= x << 4
	x ^= x << 8
	x ^= x << 16
	x ^= x << 32
	return x
}

// escapedBits returns the bytes of a block that follow an escaping
// backslash, given its backslashes bs and carry (bit 0: the block's first
// byte is escaped by a backslash that ended the block before), and the
// carry for the next block. A backslash escapes the byte after it unless it
// is escaped itself. Blocks without backslashes, nearly all of them, take
// the first branch; the loop visits each escaping backslash once.
func escapedBits(bs, carry uint64) (esc, next uint64) {
	if bs == 0 {
		return carry, 0
	}
	esc = carry
	bs &^= carry
	for bs != 0 {
		p := uint(bits.TrailingZeros64(bs))
		if p == asm.BlockSize-1 {
			return esc, 1
		}
		esc |= 1 << (p + 1)
		bs &^= 3 << p
	}
	return esc, 0
}
