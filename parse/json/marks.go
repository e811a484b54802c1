package json

import (
	"math/bits"

	"github.com/simdedge/simdedge/asm"
)

// Marks: a vectorised first stage for the pure-Go engine, used where asm
// runs SIMD kernels (asm.Active() above asm.Generic; the scalar Classify
// twin would be slower than the word loops it replaces). asm.Classify turns
// a window of the input into two bit masks, one bit per byte: the bytes that
// stop a string scan ('"', '\\' and C0 controls) and RFC 8259 whitespace.
// The state machine is unchanged; only its two inner loops become bit
// scans: the next string stop is a trailing-zero count on 64 mask bits
// starting at the current byte, whatever the string's length, so the loop
// exit that mispredicted once per string (most of twitter.json's 18,000
// strings are 8 to 32 bytes) goes away, and so does the per-line loop over
// indentation.
//
// With marks, UTF-8 is checked once over the whole input (asm.ValidUTF8)
// instead of per string: outside strings a valid document is ASCII, so the
// verdict is the same, and an input that fails that check is parsed again
// without marks, whose per-string check gives the error offset.
//
// Windows are classified as the parse reaches them, so the masks take a
// fixed 4 KiB per Parser whatever the input's size.

// Mask classes, in the order of markTable.
const (
	markStop    = 0
	markSpace   = 1
	markClasses = 2
	// markWindow is the number of input bytes classified per refill
	// (a multiple of asm.BlockSize).
	markWindow = 16 << 10
	// marksMinLen is the input length below which the word loops run even
	// where marks pay: the Classify and ValidUTF8 calls cost a fixed few
	// tens of ns. BenchmarkSmall (compact documents; 2-core AVX-512
	// machine, Go 1.26, CPU time): word loops 11 % ahead at 128 bytes,
	// the two within noise of each other from 512 bytes up; on indented
	// documents with longer strings marks win (twitter.json by 20 %).
	marksMinLen = 512
	blockShift  = 6 // log2(asm.BlockSize)
	blockMask   = asm.BlockSize - 1
)

var markTable = asm.MustClassTable(
	func(c byte) bool { return c == '"' || c == '\\' || c < ' ' }, // markStop
	jsonSpace, // markSpace
)

// marks holds the class masks of one window [base, end) of b; base is a
// multiple of asm.BlockSize, and so is end unless it is len(b).
type marks struct {
	b    []byte
	buf  []uint64
	base int
	end  int
}

// useMarks reports whether marks pay on this build and CPU level.
func useMarks() bool { return asm.Active() != asm.Generic }

// marksFor prepares d's marks for b and reports whether the scans must
// still check UTF-8 per string: marks are used when they pay and the whole
// input is valid UTF-8 (or need not be), so strings need no check of their
// own; otherwise mk is nil and the word loops check each string.
func (d *Document) marksFor(b []byte) (mk *marks, checkUTF8 bool) {
	checkUTF8 = !d.opts.AllowInvalidUTF8
	if d.noMarks || len(b) < d.marksMin || !useMarks() || (checkUTF8 && !asm.ValidUTF8(b)) {
		return nil, checkUTF8
	}
	d.marks.reset(b)
	return &d.marks, false
}

func (m *marks) reset(b []byte) {
	if m.buf == nil {
		// One block of zero words after the window, so that bits() may
		// read the block after the last one.
		m.buf = make([]uint64, asm.ClassifiedLen(markWindow, markClasses)+markClasses)
	}
	m.b, m.base, m.end = b, 0, 0
}

// refill classifies the window starting at the block holding i (i <
// len(m.b)). The parser only moves forwards, but a position before the
// window is refilled too rather than trusted.
func (m *marks) refill(i int) {
	base := i &^ blockMask
	n := min(markWindow, len(m.b)-base)
	w := asm.Classify(m.buf, m.b[base:base+n], markTable)
	m.buf[w], m.buf[w+1] = 0, 0
	m.base, m.end = base, base+n
}

// bits returns the class bits of positions i..i+63 (bit 0 for i), for
// base <= i < end; positions at or past end read as 0.
func (m *marks) bits(i, class int) uint64 {
	k := (i-m.base)>>blockShift*markClasses + class
	s := uint(i) & blockMask
	// For s == 0 the second shift is by 64, which Go defines as 0.
	return m.buf[k]>>s | m.buf[k+markClasses]<<(asm.BlockSize-s)
}

// nextStop returns the index of the first '"', '\\' or control byte at or
// after i, or len(b).
func (m *marks) nextStop(i int) int {
	for {
		if uint(i-m.base) >= uint(m.end-m.base) { // i outside [base, end)
			if i >= len(m.b) {
				return len(m.b)
			}
			m.refill(i)
		}
		if x := m.bits(i, markStop); x != 0 {
			return i + bits.TrailingZeros64(x)
		}
		// No stop in i..i+63 (nor past end, which reads as 0): move on,
		// but not past end, whose bytes this window has not classified.
		i = min(i+asm.BlockSize, m.end)
	}
}

// nextNonSpace returns the index of the first byte at or after i that is
// not RFC 8259 whitespace, or len(b).
func (m *marks) nextNonSpace(i int) int {
	for {
		if uint(i-m.base) >= uint(m.end-m.base) { // i outside [base, end)
			if i >= len(m.b) {
				return len(m.b)
			}
			m.refill(i)
		}
		x := ^m.bits(i, markSpace) // positions past end read as non-space
		if x == 0 {
			i += asm.BlockSize // all 64 are whitespace inside the window
			continue
		}
		if j := i + bits.TrailingZeros64(x); j < m.end {
			return j
		}
		i = m.end
	}
}

// scanStringMarked is scanString over marks, for input already known to be
// valid UTF-8: same results, same error offsets.
func scanStringMarked(b []byte, i int, m *marks) (end int, escaped bool, errAt int, err error) {
	for {
		i = m.nextStop(i)
		if i >= len(b) {
			return 0, false, len(b), ErrUnexpectedEOF
		}
		switch b[i] {
		case '"':
			return i, escaped, 0, nil
		case '\\':
			escaped = true
			n, e := checkEscape(b, i)
			if e != nil {
				return 0, false, i, e
			}
			i += n
		default:
			return 0, false, i, ErrControlChar
		}
	}
}

// skipWSMarked is skipWS with marks (m may be nil: no marks).
func skipWSMarked(b []byte, i int, m *marks) int {
	if i < len(b) && b[i] > ' ' {
		return i
	}
	return skipWSSlowMarked(b, i, m)
}

// skipWSSlowMarked is one out-of-line call for a whitespace run, with the
// mask scan in its body rather than behind a second call.
//
//go:noinline
func skipWSSlowMarked(b []byte, i int, m *marks) int {
	if m == nil {
		return skipWSSlow(b, i)
	}
	if uint(i-m.base) < uint(m.end-m.base) {
		if x := ^m.bits(i, markSpace); x != 0 {
			if j := i + bits.TrailingZeros64(x); j < m.end {
				return j
			}
		}
	}
	return m.nextNonSpace(i)
}

// stopFast returns the first string stop at or after i when it lies in
// the 64 bytes from i and inside the window, else -1: the common short
// string, small enough to inline into the parser's loop.
func (m *marks) stopFast(i int) int {
	if uint(i-m.base) < uint(m.end-m.base) {
		if x := m.bits(i, markStop); x != 0 {
			return i + bits.TrailingZeros64(x)
		}
	}
	return -1
}
