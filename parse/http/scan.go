package http

import (
	"encoding/binary"
	"math/bits"

	"github.com/simdedge/simdedge/asm"
)

// The head walker needs two searches: the next byte that is not a tchar
// (it ends a method or a field name) and the next control byte (it ends a
// line, or is an error). scanner answers both, either from bit masks that
// asm.Classify computes for a window of bytes at a time, or with scalar
// code. Everything else in the walker is shared, so the two paths differ
// only here and are tested and fuzzed against each other.
//
// Which path runs: the mask walk when asm dispatches to a SIMD level, the
// scalar walk when it runs the pure-Go twins (purego, noasm, other
// architectures, old CPUs). Emulating Classify in Go costs about a table
// load per byte and class plus the packing, which is slower than scanning
// the same bytes with a word-at-a-time test (see BenchmarkScanPaths), so
// the scalar path does not emulate the vector one.

// walkMode forces one path; tests and benchmarks set it, nothing else.
type walkMode uint8

const (
	walkAuto walkMode = iota
	walkScalar
	walkMasks
)

var forceWalk = walkAuto

// useMasks decides the path for one parse. It reads two package variables;
// deciding per call (rather than once at init) lets asm.SetLevel in tests
// switch paths.
func useMasks() bool {
	switch forceWalk {
	case walkScalar:
		return false
	case walkMasks:
		return true
	}
	return asm.Active() != asm.Generic
}

// windowBlocks is how many 64-byte blocks one Classify call may cover,
// and firstBlocks how many the first call of a parse covers. A call costs
// ~4 ns plus ~0.012 ns per byte with AVX-512, and the walk pays a little
// per window move, so fewer, longer
// calls win, until they classify bytes past the head (a body, or the next
// pipelined request). Measured (thread CPU time, Go 1.26, 2-core AVX-512
// dev machine, shared) for first/later window sizes 4/4, 8/16 and 16/16
// blocks: the 703-byte kittyhell head took 198, 189 and 181 ns, a 90-byte
// head followed by a 4 KiB body 78, 86 and 96 ns. 8/16 is the compromise:
// a small head classifies 512 bytes, a 703-byte one takes two calls.
//
// Since then the walk grows its window in place (grow) and takes whole
// runs of lines without calls (fastFields), and a second call costs a
// 703-byte head ~15 ns more than one call over all its bytes (164 against
// 179 ns, BenchmarkPhases/avx512/all, same conditions). So when the whole
// input fits one window, which is when a request arrives alone without a
// large body, the first call classifies all of it; a longer input starts
// with firstBlocks as before. The price is paid by inputs of 513 to 1024
// bytes with a short head: a 90-byte head with a 900-byte body went from
// 103 to 116 ns (BenchmarkHeadWithBody; with a 4 KiB body, or 400 bytes,
// no change).
const (
	windowBlocks = 16
	firstBlocks  = 8
)

const windowBytes = windowBlocks * asm.BlockSize

type scanner struct {
	buf   []byte // the bytes being walked, already cut to the head limit
	masks bool
	base  int // offset in buf of bit 0 of the window's first block
	end   int // offset in buf just past the classified window
	fills int // Classify calls so far in this parse
	// m is Classify's output for the window: for block i, m[2i] has a
	// bit for each tchar byte and m[2i+1] one for each control byte. The
	// walker inverts the tchar words as it reads them (inverting them
	// all after each Classify cost more); bits past the end of the input
	// are then set, and callers treat offsets >= len(buf) as "end of
	// input".
	m [windowBlocks * numClasses]uint64
}

func (s *scanner) init(buf []byte) {
	s.buf = buf
	s.masks = useMasks()
	s.base, s.end = 0, 0
	s.fills = 0
	if s.masks && len(buf) > 0 {
		// Every parse needs the first window; classifying it now lets
		// the first searches take their inline fast paths. (fill(0),
		// written out: one call fewer a parse.)
		e := len(buf)
		if e > windowBytes {
			e = firstBlocks * asm.BlockSize
		}
		asm.Classify(s.m[:], buf[:e], headTable)
		s.base, s.end, s.fills = 0, e, 1
	}
}

// fill classifies the window starting at p: it grows the window when p
// lies in what growing would cover, and otherwise starts a new one at p.
func (s *scanner) fill(p int) {
	if s.fills > 0 && p >= s.end && s.grow() && p < s.end {
		return
	}
	size := windowBytes
	if s.fills == 0 && len(s.buf) > windowBytes {
		size = firstBlocks * asm.BlockSize
	}
	s.fills++
	e := min(len(s.buf), p+size)
	asm.Classify(s.m[:], s.buf[p:e], headTable)
	s.base, s.end = p, e
}

// grow classifies the bytes after the window into the mask slots after
// its blocks, keeping base, and reports whether the window grew. It does
// not when the window already ends at the input's end or fills all its
// slots. A head that outgrows its first window (most heads over 512
// bytes) is then classified once, with no byte classified twice, and a
// line across the old end reads its masks from both parts.
func (s *scanner) grow() bool {
	used := s.end - s.base
	if s.end >= len(s.buf) || used >= windowBytes || used%asm.BlockSize != 0 {
		return false
	}
	e := min(len(s.buf), s.base+windowBytes)
	asm.Classify(s.m[used/asm.BlockSize*numClasses:], s.buf[s.end:e], headTable)
	s.fills++
	s.end = e
	return true
}

// next returns the offset of the first byte at or after p whose bit is set
// in class's masks, or an offset >= len(s.buf) if there is none. It is the
// slow path of nonTcharInBlock and nextCtl: it moves the window as needed.
func (s *scanner) next(p int, class uint) int {
	for p < len(s.buf) {
		if p < s.base || p >= s.end {
			s.fill(p)
		}
		rel := uint(p - s.base)
		blk := rel / asm.BlockSize
		w := s.m[blk%windowBlocks*numClasses+class]
		if class == classTchar {
			w = ^w
		}
		if w >>= rel % asm.BlockSize; w != 0 {
			return p + bits.TrailingZeros64(w)
		}
		p = s.base + int(blk+1)*asm.BlockSize
	}
	return len(s.buf)
}

// nonTcharInBlock is the fast path of a search for the first byte at or
// after p that is not a tchar: a hit in p's block of the current window,
// a load, a shift and a count, without calls so that it inlines. It
// returns the offset and true, or false when p lies outside the window or
// its block holds no such byte from p; then nextNonTcharSlow(p) answers,
// with an offset >= len(s.buf) if there is none (the mask walk may report
// a position past the end; callers test ">= len"). (In scalar mode the
// window is empty, so the slow path scans.)
func (s *scanner) nonTcharInBlock(p int) (int, bool) {
	if rel := uint(p - s.base); rel < uint(s.end-s.base) {
		if w := ^s.m[rel/asm.BlockSize%windowBlocks*numClasses+classTchar] >> (rel % asm.BlockSize); w != 0 {
			return p + bits.TrailingZeros64(w), true
		}
	}
	return p, false
}

func (s *scanner) nextNonTcharSlow(p int) int {
	if s.masks {
		return s.next(p, classTchar)
	}
	b := s.buf
	for p < len(b) && tcharSet[b[p]] {
		p++
	}
	return p
}

// nextCtl returns the offset of the first control byte (isCtl) at or after
// p, or len(s.buf). Its fast path is nonTcharInBlock's.
func (s *scanner) nextCtl(p int) int {
	if rel := uint(p - s.base); rel < uint(s.end-s.base) {
		if w := s.m[rel/asm.BlockSize%windowBlocks*numClasses+classCtl] >> (rel % asm.BlockSize); w != 0 {
			return p + bits.TrailingZeros64(w)
		}
	}
	return s.nextCtlSlow(p)
}

// ctlInWindow is nextCtl's search across the blocks of the window, without
// calls so that it inlines: it returns the offset of the first control
// byte at or after p and true, or the window's end and false when the
// window holds none from p (then nextCtlSlow goes on from there). A
// request line or field value often runs past the end of its block.
func (s *scanner) ctlInWindow(p int) (int, bool) {
	for {
		rel := uint(p - s.base)
		if rel >= uint(s.end-s.base) {
			return p, false
		}
		if w := s.m[rel/asm.BlockSize%windowBlocks*numClasses+classCtl] >> (rel % asm.BlockSize); w != 0 {
			return p + bits.TrailingZeros64(w), true
		}
		p += asm.BlockSize - int(rel%asm.BlockSize)
	}
}

func (s *scanner) nextCtlSlow(p int) int {
	if s.masks {
		return s.next(p, classCtl)
	}
	return scalarNextCtl(s.buf, p)
}

// Word-at-a-time constants: a byte value repeated in all eight lanes.
const (
	lanes01 = 0x0101010101010101
	lanes80 = 0x8080808080808080
)

// ctlLanes sets bit 7 of each lane of x holding a byte below 0x20 or equal
// to 0x7f. As with the classic has-zero-byte trick, lanes above the lowest
// match may be false positives (a borrow), but the lowest set lane is
// exact. Lanes >= 0x80 never match, since both terms require bit 7 clear.
func ctlLanes(x uint64) uint64 {
	del := x ^ (lanes01 * 0x7f)
	return ((x-lanes01*' ')&^x | (del-lanes01)&^del) & lanes80
}

// targetLanes sets bit 7 of each lane of x holding a byte that is not
// allowed in a request-target (below 0x21, "#", or 0x7f and above; see
// isTargetByte). Only whether the result is zero is meaningful: carries
// and borrows start at a true match, so they never create a match in a
// word without one. A "#" lane is the zero lane of x^'#' (the classic
// has-zero-byte test).
func targetLanes(x uint64) uint64 {
	h := x ^ (lanes01 * '#')
	return ((x-lanes01*'!')&^x | x | (x + lanes01) | (h-lanes01)&^h) & lanes80
}

// scalarNextCtl is nextCtl without masks: eight bytes per step, since field
// values (most of a head's bytes) are long runs without control bytes.
func scalarNextCtl(b []byte, p int) int {
	for ; p+8 <= len(b); p += 8 {
		if m := ctlLanes(binary.LittleEndian.Uint64(b[p:])); m != 0 {
			return p + bits.TrailingZeros64(m)/8
		}
	}
	for ; p < len(b); p++ {
		if isCtl(b[p]) {
			return p
		}
	}
	return p
}
