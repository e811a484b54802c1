package http

import (
	"math/bits"

	"github.com/simdedge/simdedge/asm"
)

// The fast field walk: field lines whose every step takes its common case,
// read from the classified window alone, in a loop that calls nothing.
//
// parseFields's general walk handles every line, but it is a loop with
// calls on its rare paths (moving the window, tabs, errors, framing
// fields), so Go keeps its state in stack slots and moves it about on the
// common path too. fastFields takes the lines that need none of that and
// stops, consuming nothing of it, at the first line that does; the general
// walk then takes that one line and hands back. Both walks accept exactly
// the same lines with the same results (the fuzz targets compare the
// masks walk with the scalar one, which never runs fastFields).
//
// A framing field (kindOf) is mostly not recorded here, since recording
// calls out: fastFields notes its index in pending, and parseFields records
// the noted fields, in order, as soon as fastFields returns and before it
// looks at any later line, so errors come out in the order they would
// have line by line. The two that every request carries and that cannot
// fail, Host and "Connection: keep-alive", are recorded in place.

// maxPending bounds the framing fields one fastFields run notes; a run
// stops at the next one when full.
const maxPending = 8

// pending is the framing fields a fastFields run noted: indexes into the
// Headers it appended to.
type pending struct {
	n   int
	idx [maxPending]int
}

// fastFields walks field lines from pos while each is a tchar name, a
// colon, and a value without HTAB that ends in CRLF, all within the window
// and the name within two blocks; while hs has room (cap and maxHeaders);
// and while pend has room. It returns the offset of the first line it did
// not take, hs with the taken lines appended, and whether it stopped for
// want of classified bytes (the line's end lies past the window).
//
// Each line starts where the last one ended, so a walk that searches for
// each line's end from its start is one long chain of dependent loads and
// bit scans (measured: ~13 ns a line on the 703-byte corpus request, AMD
// EPYC Zen 4, Go 1.26). Here the line ends come instead from a running
// word of control-byte bits, cw, from which each line takes its two
// lowest bits (CR and LF): the only step that waits on the line before is
// clearing them, and each line's name and value are worked out beside the
// next line's walk.
//
// Every offset it reads at or cuts at lies below the window's end, which
// is at most len(buf), so it reads and cuts with byteAt and view
// (unsafe.go) rather than repeat the compiler's bounds checks: ~10 ns on
// the 703-byte corpus request (BenchmarkPhases/avx512/all, 164 against
// 154 ns, AMD EPYC Zen 4, Go 1.26).
func (s *scanner) fastFields(pos int, hs Headers, maxHeaders int, f *framing, pend *pending) (int, Headers, bool) {
	buf := s.buf
	base, end := s.base, s.end
	m := &s.m
	if uint(pos-base) >= uint(end-base) {
		return pos, hs, pos >= end
	}
	limit := min(cap(hs), maxHeaders)
	np := pend.n
	// blk is the window block holding the next control byte, cw its
	// control bits from pos on; nblk the window's blocks. (Unsigned, so
	// that divisions and remainders by powers of two are shifts and
	// masks.)
	nblk := uint(end-base+asm.BlockSize-1) / asm.BlockSize
	blk := uint(pos-base) / asm.BlockSize
	cw := m[blk%windowBlocks*numClasses+classCtl] &^ (1<<(uint(pos-base)%asm.BlockSize) - 1)
	for len(hs) < limit && np < maxPending {
		for cw == 0 {
			if blk++; blk >= nblk {
				pend.n = np
				return pos, hs, true
			}
			cw = m[blk%windowBlocks*numClasses+classCtl]
		}
		// The first control byte from pos: it must be a CR before LF.
		bit := bits.TrailingZeros64(cw)
		c := base + int(blk*asm.BlockSize) + bit
		if c+1 >= end {
			pend.n = np
			return pos, hs, true
		}
		if !crlfAt(buf, c) {
			break
		}
		// The name: tchars from pos (the first byte must be one, else
		// this is the empty line, whitespace or an error), then a colon.
		// No control byte lies before c, so the name ends before it.
		rel := uint(pos - base)
		nb := rel / asm.BlockSize
		w := ^m[nb%windowBlocks*numClasses+classTchar] >> (rel % asm.BlockSize)
		var ne int
		if w != 0 {
			// Tested non-zero first, so the bit scan needs no fix-up
			// for a zero word. A first byte that is not a tchar makes
			// ne == pos, tested with the colon below (testing bit 0
			// here kept the unshifted word alive, in a stack slot).
			ne = pos + bits.TrailingZeros64(w)
		} else {
			// The name runs into the next block, which the window
			// holds, since c lies past it.
			nb++
			w = ^m[nb%windowBlocks*numClasses+classTchar]
			ne = base + int(nb*asm.BlockSize) + bits.TrailingZeros64(w)
		}
		if ne == pos || ne >= c || byteAt(buf, ne) != ':' {
			break
		}
		// OWS around the value can only be SP here: c is the line's
		// first control byte, so the line holds no HTAB.
		// Nearly every line has one SP after the colon and none before
		// the CR, so that case is tested first, straight through. (The
		// byte after a SP at ne+1 is at most c, and c+1 < end.)
		v, e := ne+1, c
		if byteAt(buf, v) == ' ' && byteAt(buf, v+1) != ' ' {
			v++
		} else {
			for v < c && byteAt(buf, v) == ' ' {
				v++
			}
		}
		if byteAt(buf, e-1) == ' ' {
			for e > v && byteAt(buf, e-1) == ' ' {
				e--
			}
		}
		name, value := view(buf, pos, ne), view(buf, v, e)
		hs = hs[:len(hs)+1]
		h := &hs[len(hs)-1]
		h.Name, h.Value = name, value
		// maybeFraming on the locals (after the stores above, reading
		// h.Name back would wait on them), with the first byte read
		// without a bounds check.
		if l := uint(ne - pos); l < uint(len(framingByLen)) && framingByLen[l].first == byteAt(buf, pos)|0x20 {
			// Host and "Connection: keep-alive", which nearly every
			// request carries, are recorded here; recording them can
			// fail no check, so taking them before the noted fields
			// changes no verdict. The rest are noted.
			switch k := foldedWords(name); {
			case len(name) == len("host") && k == framingByLen[len("host")].key:
				if f.hosts++; f.hosts == 1 {
					f.host = value
				}
			case len(name) == len("connection") && k == framingByLen[len("connection")].key &&
				len(value) == len("keep-alive") && foldedWords(value) == keepAliveKey:
				f.keepAlive = true
			default:
				pend.idx[np] = len(hs) - 1
				np++
			}
		}
		pos = c + 2
		// Take the CR's bit and the LF's, which is the next one up or,
		// for a CR at a block's last byte, bit 0 of the next block
		// (within the window, since c+1 < end).
		if bit == asm.BlockSize-1 {
			blk++
			cw = m[blk%windowBlocks*numClasses+classCtl] &^ 1
		} else {
			cw &= cw - 1
			cw &= cw - 1
		}
	}
	pend.n = np
	return pos, hs, false
}

// recordPending records the framing fields fastFields noted, in order.
func recordPending(hs Headers, pend *pending, f *framing) error {
	for _, i := range pend.idx[:pend.n] {
		h := &hs[i]
		if k := kindOf(h.Name); k != fieldOther {
			if err := f.field(k, h.Value); err != nil {
				return err
			}
		}
	}
	pend.n = 0
	return nil
}
