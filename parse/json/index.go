package json

import (
	"slices"

	"github.com/simdedge/simdedge/asm"
)

// The structural index: a first stage in the manner of simdjson, used where
// marks pay (marks.go) for whole documents. asm.JSONIndex classifies each
// 64-byte block of the input and, in the same pass, finds the escaped
// bytes, the bytes inside strings and, from these, the structural
// positions: operators outside strings, opening quotes, and the first byte of every other run of non-whitespace outside
// strings (numbers, literals, or stray bytes), as a []uint32 of offsets in
// order.
//
// Why: in the marks engine every position depends on the one before it
// (the end of a string is found from its start, the next token from that
// end), so each token costs the latency of a chain of loads. The second
// stage (build_index.go) takes each token's position from the index
// instead, a load that does not depend on parsing the token before, so the
// CPU overlaps consecutive tokens. Measured on twitter.json (AMD EPYC Zen
// 4, Go 1.26, AVX-512, CPU time on a shared machine): the tape stage fell
// from 279 to 137 µs for 84 µs of index, the whole parse from 336 to 258
// µs (bench/results/parsers-json-2026-11-28.md); with the one-pass
// kernel, the index takes 54 µs (AVX-512 with VBMI2) and 89 µs (AVX2)
// (bench/results/parsers-json-2026-11-28-pass2.md).
//
// The index is only a guide: the second stage still checks every token's
// bytes, and gives up (falling back to the marks engine, which gives the
// verdict and the error offset) at the first thing that is not a valid
// document. The index only has to be exact for valid documents.

const (
	// idxPlainEnd is the slot of index.mk that holds, instead of the
	// whitespace mask (which the second stage never reads), the closing
	// quotes of the plain strings (asm.JSONPlainEnds): those with no
	// backslash and no control byte. A string whose closing quote is the
	// byte before the next structural position is plain when that byte's
	// bit is set (plainEnd): one bit, where the specials themselves
	// would need the words of every block the string spans.
	idxPlainEnd = asm.JSONPlainEnds
	// indexTail is the number of sentinel entries after the last
	// structural position (each one len(b)).
	indexTail = 2
)

// index is the first stage's output for one document, reused by a Parser.
type index struct {
	// pos holds the structural positions, then indexTail copies of len(b).
	pos []uint32
	// mk holds the stop masks of the whole document, in the layout of
	// marks (one window spanning the input), for the string scans of the
	// second stage, and the plain ends (idxPlainEnd) in the second slot.
	mk marks
}

// build fills x for b (len(b) > 0, at most DefaultMaxSize). It indexes b
// one window at a time, so that pos grows by at most a window's room for
// positions (asm.JSONIndex wants 64 per block) beyond what it holds.
func (x *index) build(b []byte) {
	words := asm.ClassifiedLen(len(b), markClasses) + markClasses
	if cap(x.mk.buf) < words {
		x.mk.buf = make([]uint64, words)
	}
	masks := x.mk.buf[:words]
	x.mk.b, x.mk.buf, x.mk.base, x.mk.end = b, masks, 0, len(b)
	// The block after the last reads as zero (see marks.bits).
	masks[words-2], masks[words-1] = 0, 0
	pos := x.pos[:0]
	var c asm.JSONCarry
	for w := 0; w < len(b); w += markWindow {
		win := b[w:min(w+markWindow, len(b))]
		room := (len(win) + asm.BlockSize - 1) / asm.BlockSize * asm.BlockSize
		pos = slices.Grow(pos, room+indexTail)
		n := asm.JSONIndex(pos[len(pos):len(pos)+room], masks[w>>blockShift*markClasses:], win, uint32(w), &c)
		pos = pos[:len(pos)+n]
	}
	for range indexTail {
		pos = append(pos, uint32(len(b)))
	}
	x.pos = pos
}

// plainEnd reports whether byte e (0 <= e < len(b)) closes a plain
// string. Where e is the byte before the structural position that follows
// a string's opening quote, that string ends at e and is plain: the
// string between them cannot end sooner (nothing after its end would be
// structural before e+1) nor hold another opening quote.
func (x *index) plainEnd(e int) bool {
	return x.mk.buf[e>>blockShift*markClasses+idxPlainEnd]>>(e&(1<<blockShift-1))&1 != 0
}
