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

// windowBlocks is how many 64-byte blocks one Classify call covers. A
// window larger than the typical head wastes classification on body bytes
// that follow it in the buffer; a smaller one pays the per-call cost more
// often. Four blocks (256 bytes) keeps the waste under ~250 bytes while a
// 700-byte head needs three calls.
const windowBlocks = 4

const windowBytes = windowBlocks * asm.BlockSize

type scanner struct {
	buf   []byte // the bytes being walked, already cut to the head limit
	masks bool
	base  int // offset in buf of bit 0 of the window's first block
	end   int // offset in buf just past the classified window
	// The window's masks, one word per 64-byte block: nonTchar has a bit
	// for each byte that is not a tchar (and none past the end of the
	// input, see fill), ctl one for each control byte.
	nonTchar [windowBlocks]uint64
	ctl      [windowBlocks]uint64
	raw      [windowBlocks * numClasses]uint64 // Classify's interleaved output
}

func (s *scanner) init(buf []byte) {
	s.buf = buf
	s.masks = useMasks()
	s.base, s.end = 0, 0
}

// fill classifies the window starting at p.
func (s *scanner) fill(p int) {
	e := min(len(s.buf), p+windowBytes)
	asm.Classify(s.raw[:], s.buf[p:e], headTable)
	for i := range windowBlocks {
		s.nonTchar[i] = ^s.raw[i*numClasses+classTchar]
		s.ctl[i] = s.raw[i*numClasses+classCtl]
	}
	if tail := (e - p) % asm.BlockSize; tail != 0 {
		// Past the end of the input nothing is "not a tchar": a search
		// there falls through to next, which knows where the input ends.
		s.nonTchar[(e-p)/asm.BlockSize] &= 1<<tail - 1
	}
	s.base, s.end = p, e
}

// next returns the offset of the first byte at or after p whose bit is set
// in masks (s.nonTchar or s.ctl), or len(s.buf) if there is none. It is the
// slow path of nextNonTchar and nextCtl: it moves the window as needed.
func (s *scanner) next(p int, masks *[windowBlocks]uint64) int {
	for p < len(s.buf) {
		if p < s.base || p >= s.end {
			s.fill(p)
		}
		rel := uint(p - s.base)
		blk := rel / asm.BlockSize
		if w := masks[blk%windowBlocks] >> (rel % asm.BlockSize); w != 0 {
			return p + bits.TrailingZeros64(w)
		}
		p = s.base + int(blk+1)*asm.BlockSize
	}
	return len(s.buf)
}

// nextNonTchar returns the offset of the first byte at or after p that is
// not a tchar, or len(s.buf).
//
// It is small enough to inline: the common case, a hit in p's block of the
// current window, costs a load, a shift and a count. (In scalar mode the
// window is empty, so the test fails and the slow path scans.)
func (s *scanner) nextNonTchar(p int) int {
	if rel := uint(p - s.base); rel < uint(s.end-s.base) {
		if w := s.nonTchar[rel/asm.BlockSize%windowBlocks] >> (rel % asm.BlockSize); w != 0 {
			return p + bits.TrailingZeros64(w)
		}
	}
	return s.nextNonTcharSlow(p)
}

func (s *scanner) nextNonTcharSlow(p int) int {
	if s.masks {
		return s.next(p, &s.nonTchar)
	}
	b := s.buf
	for p < len(b) && tcharSet[b[p]] {
		p++
	}
	return p
}

// nextCtl returns the offset of the first control byte (isCtl) at or after
// p, or len(s.buf). Like nextNonTchar, its fast path inlines.
func (s *scanner) nextCtl(p int) int {
	if rel := uint(p - s.base); rel < uint(s.end-s.base) {
		if w := s.ctl[rel/asm.BlockSize%windowBlocks] >> (rel % asm.BlockSize); w != 0 {
			return p + bits.TrailingZeros64(w)
		}
	}
	return s.nextCtlSlow(p)
}

func (s *scanner) nextCtlSlow(p int) int {
	if s.masks {
		return s.next(p, &s.ctl)
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
// allowed in a request-target (below 0x21, or 0x7f and above). Only
// whether the result is zero is meaningful: carries and borrows start at a
// true match, so they never create a match in a word without one.
func targetLanes(x uint64) uint64 {
	return ((x-lanes01*'!')&^x | x | (x + lanes01)) & lanes80
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
