package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// laneBytes is the width of one 128-bit lane, the reach of vpslldq and
// vpshufb.
const laneBytes = 16

// lane describes one element width of the prefix-sum kernels.
type lane struct {
	bits  int
	add   func(...Op)
	sub   func(...Op)
	bcast func(...Op)
	// load and store move a masked tail (AVX-512 masks count elements).
	load  func(m, k, z Op)
	store func(...Op)
	ret   func(reg.GPVirtual) reg.Register
	// lastIdx is the vpshufb pattern that copies each lane's last element
	// to every element of that lane.
	lastIdx Mem
	// spread holds the vpshufb patterns of inLaneScan's later steps.
	spread []Mem
	// odd keeps the odd elements of a lane (all ones) and zeroes the even
	// ones: the AVX2 kernels' first scan step from an unaligned load.
	odd Mem
}

func (l lane) bytes() int { return l.bits / 8 }

var laneWidths = []*lane{
	{bits: 8, add: VPADDB, sub: VPSUBB, bcast: VPBROADCASTB, load: VMOVDQU8_Z, store: VMOVDQU8, ret: func(r reg.GPVirtual) reg.Register { return r.As8() }},
	{bits: 16, add: VPADDW, sub: VPSUBW, bcast: VPBROADCASTW, load: VMOVDQU16_Z, store: VMOVDQU16, ret: func(r reg.GPVirtual) reg.Register { return r.As16() }},
	{bits: 32, add: VPADDD, sub: VPSUBD, bcast: VPBROADCASTD, load: VMOVDQU32_Z, store: VMOVDQU32, ret: func(r reg.GPVirtual) reg.Register { return r.As32() }},
}

// prefixSumData declares the lastIdx tables; avo wants data before text.
func prefixSumData() {
	for _, l := range laneWidths {
		l.lastIdx = GLOBL(fmt.Sprintf("lastIdx%d", l.bits), RODATA|NOPTR)
		w := l.bytes()
		for j := 0; j < laneBytes; j++ {
			DATA(j, U8(laneBytes-w+j%w))
		}
		spreadData(l)
		l.odd = GLOBL(fmt.Sprintf("odd%d", l.bits), RODATA|NOPTR)
		for j := 0; j < laneBytes; j++ {
			DATA(j, U8(0xff*(j/w%2)))
		}
	}
	hiLane = GLOBL("hiLane", RODATA|NOPTR)
	for j := 0; j < ymmBytes; j++ {
		DATA(j, U8(0xff*(j/laneBytes)))
	}
	for _, i := range []int{3, 7} {
		m := GLOBL(fmt.Sprintf("dword%d", i), RODATA|NOPTR)
		for j := 0; j < laneBytes; j += 4 {
			DATA(j, U32(i))
		}
		dwordIdx = append(dwordIdx, m)
	}
}

// hiLane is all ones in the upper 128-bit lane of a ymm vector and zero in
// the lower one; dwordIdx are the vpermd patterns that copy dword 3 and
// dword 7 to every dword.
var (
	hiLane   Mem
	dwordIdx []Mem
)

func prefixSumName(l *lane, excl bool, level string) string {
	kind := "Incl"
	if excl {
		kind = "Excl"
	}
	return fmt.Sprintf("prefixSum%d%s%s", l.bits, kind, level)
}

func prefixSumSig(l *lane) string {
	return fmt.Sprintf("func(dst, src []uint%d, carry uint%d) uint%d", l.bits, l.bits, l.bits)
}

// inLaneScan scans each 128-bit lane with the Sklansky shift-and-add
// network: at span s (one element, then 2, 4... up to half a lane), every
// block of 2s bytes adds the last element of its lower half to each element
// of its upper half, after which each block holds its own prefix sums.
//
// The first step is a bit shift inside elements of twice the width
// (vpsllw, vpslld or vpsllq); the later ones are one vpshufb each with a
// pattern (spread) that also zeroes the lower halves. It now scans only
// the first vector of a call, and every vector of an in-place call; the
// rest take the windowed scan of prefixwindow.go, which needs seven vector
// operations per 8 32-bit elements where this network plus the lane fix-up
// and the carry need thirteen.
//
// History of this form, measured on AMD EPYC family 26 (Zen 5,
// virtualised, 3.5 GHz) with Go 1.26: the 32-bit AVX2 kernel first ran at
// ~2.3x the scalar twin (3.6 cycles per vector of 8; the scalar loop
// retires about one element per cycle, 1.08 cycles measured), and at ~2.6x
// once the first step came from an unaligned load, the lane fix-up from
// vpermd and the exclusive form from the shifted input. Taking the second
// step from loads too (three masked unaligned loads) was 12 % slower;
// Hillis-Steele steps (one vpslldq per step) ~7 % slower; the first step of
// 8- and 16-bit lanes as one multiply by 0x0101 or 0x00010001 no different;
// four vectors per iteration instead of two no different; a two-stream form
// without cross-lane permutes (lane 0 scanning the first half of the input
// and lane 1 the second, then a fix-up pass) -4 % for 32-bit lanes, +12 %
// for the exclusive form.
//
// When prev is not nil it is the input one element before x (an unaligned
// load), and the first step takes the odd elements from it with one vpand
// against odd instead of the bit shift. That moves one operation off the
// two shift/shuffle pipes onto the four ALU pipes.
func inLaneScan(l *lane, x reg.VecVirtual, prev Op, odd reg.VecVirtual, spread []reg.VecVirtual, alloc func() reg.VecVirtual) {
	shifts := map[int]func(...Op){8: VPSLLW, 16: VPSLLD, 32: VPSLLQ}
	t := alloc()
	if prev != nil {
		VPAND(prev, odd, t)
	} else {
		shifts[l.bits](U8(l.bits), x, t)
	}
	l.add(t, x, x)
	for _, p := range spread {
		t := alloc()
		VPSHUFB(p, x, t)
		l.add(t, x, x)
	}
}

// spreadData declares the vpshufb patterns of inLaneScan's later steps for
// lane width l: for span s, byte j of a lane takes the byte at the same
// place in the last element of the lower half of its 2s-byte block when j
// is in the upper half, and zero (index bit 7 set) otherwise.
func spreadData(l *lane) {
	w := l.bytes()
	for s := 2 * w; s < laneBytes; s *= 2 {
		m := GLOBL(fmt.Sprintf("spread%d_%d", l.bits, s), RODATA|NOPTR)
		for j := 0; j < laneBytes; j++ {
			v := 0x80
			if j%(2*s) >= s {
				v = j/(2*s)*2*s + s - w + j%w
			}
			DATA(j, U8(v))
		}
		l.spread = append(l.spread, m)
	}
}

// loadSpread broadcasts l's spread patterns into registers.
func loadSpread(l *lane, alloc func() reg.VecVirtual, bcast func(m, v Op)) []reg.VecVirtual {
	var rs []reg.VecVirtual
	for _, m := range l.spread {
		r := alloc()
		bcast(m, r)
		rs = append(rs, r)
	}
	return rs
}

func prefixSumAVX2(l *lane, excl bool) {
	name := prefixSumName(l, excl, "AVX2")
	kernel(name, prefixSumSig(l))
	Doc(name+" is an AVX2 prefix-sum kernel. It processes the whole 32-byte",
		"vectors of src (the caller finishes the rest) and returns the carry.")
	dst := Load(Param("dst").Base(), GP64())
	p := Load(Param("src").Base(), GP64())
	n := Load(Param("src").Len(), GP64())
	carry := Load(Param("carry"), GP32())
	if sh := map[int]int{8: 0, 16: 1, 32: 2}[l.bits]; sh > 0 {
		SHLQ(U8(sh), n) // elements to bytes
	}
	c, odd := YMM(), YMM()
	cx := XMM()
	VMOVD(carry, cx)
	l.bcast(cx, c)
	advance := advancer(p, dst, n)
	CMPQ(n, U8(ymmBytes))
	JB(LabelRef(name + "_done"))
	// The windowed scan from the first vector on (prefixwindow.go), unless
	// in place or short; those take the in-lane scan below.
	ymmWin.loopFromStart(l, name, excl, p, dst, n, c, advance, name+"_inlane", name+"_done")

	Label(name + "_inlane")
	VBROADCASTI128(l.odd, odd)
	spread := loadSpread(l, YMM, func(m, v Op) { VBROADCASTI128(m, v) })
	// fix adds lane 0's total to lane 1 of x (after the in-lane scan) and
	// returns the vector's total in every element. It is taken before the
	// carry is added, so the loop-carried dependency is one add per vector.
	var fix func(x reg.VecVirtual) reg.VecVirtual
	if l.bits == 32 {
		// Dwords: vpermd copies dword 3 everywhere, the vpand with hiLane
		// keeps it in lane 1 only, and after the add dword 7 is the total,
		// which a second vpermd spreads: two shuffles and five operations
		// instead of the byte/word form's three and five.
		i3, i7, hi := YMM(), YMM(), YMM()
		VBROADCASTI128(dwordIdx[0], i3)
		VBROADCASTI128(dwordIdx[1], i7)
		VMOVDQU(hiLane, hi)
		fix = func(x reg.VecVirtual) reg.VecVirtual {
			t, tot := YMM(), YMM()
			VPERMD(x, i3, t)
			VPAND(hi, t, t)
			l.add(t, x, x)
			VPERMD(x, i7, tot)
			return tot
		}
	} else {
		// b holds each lane's total in every element of that lane; t moves
		// lane 0's total into lane 1 (vperm2i128 imm 0x08: low lane zero,
		// high lane = lane 0). Adding t to b as well leaves the vector's
		// total in lane 1, which vpermq broadcasts.
		li := YMM()
		VBROADCASTI128(l.lastIdx, li)
		fix = func(x reg.VecVirtual) reg.VecVirtual {
			b, t := YMM(), YMM()
			VPSHUFB(li, x, b)
			VPERM2I128(U8(0x08), b, b, t)
			l.add(t, x, x)
			l.add(t, b, b)
			VPERMQ(U8(0xff), b, b)
			return b
		}
	}

	// step scans the vector at offset off and advances the carry. Every
	// vector but the first takes its first scan step from the unaligned
	// load one element back; the first may not read before src. (In place,
	// that element of the previous vector is already overwritten, but only
	// odd elements take it, and their element one back is in this vector.)
	// The exclusive form subtracts the input from the inclusive sums.
	w := l.bytes()
	step := func(off int, first bool) reg.VecVirtual {
		x := YMM()
		var prev Op
		VMOVDQU(Mem{Base: p, Disp: off}, x)
		if !first {
			prev = Mem{Base: p, Disp: off - w}
		}
		inLaneScan(l, x, prev, odd, spread, YMM)
		tot := fix(x)
		l.add(c, x, x)
		if excl {
			l.sub(Mem{Base: p, Disp: off}, x, x)
		}
		VMOVDQU(x, Mem{Base: dst, Disp: off})
		l.add(tot, c, c)
		return x
	}
	step(0, true)
	advance(ymmBytes)

	// In place or short: the in-lane scan, two vectors per iteration to
	// halve the loop overhead.
	Label(name + "_inplace_loop2")
	CMPQ(n, U8(2*ymmBytes))
	JB(LabelRef(name + "_inplace_one"))
	step(0, false)
	step(ymmBytes, false)
	advance(2 * ymmBytes)
	JMP(LabelRef(name + "_inplace_loop2"))
	Label(name + "_inplace_one")
	CMPQ(n, U8(ymmBytes))
	JB(LabelRef(name + "_done"))
	step(0, false)
	advance(ymmBytes)

	Label(name + "_done")
	r := GP32()
	VMOVD(c.AsX(), r)
	Store(l.ret(r), ReturnIndex(0))
	VZEROUPPER()
	RET()
}

func prefixSumAVX512(l *lane, excl bool) {
	name := prefixSumName(l, excl, "AVX512")
	kernel(name, prefixSumSig(l))
	Doc(name + " is an AVX-512 prefix-sum kernel over all of src (masked tail).")
	dst := Load(Param("dst").Base(), GP64())
	p := Load(Param("src").Base(), GP64())
	n := Load(Param("src").Len(), GP64())
	carry := Load(Param("carry"), GP32())
	sh := map[int]int{8: 0, 16: 1, 32: 2}[l.bits]
	if sh > 0 {
		SHLQ(U8(sh), n)
	}
	c, li, zero := ZMM(), ZMM(), ZMM()
	cx := XMM()
	VMOVD(carry, cx)
	l.bcast(cx, c)
	VBROADCASTI32X4(l.lastIdx, li)
	spread := loadSpread(l, ZMM, func(m, v Op) { VBROADCASTI32X4(m, v) })
	VPXORQ(zero, zero, zero)

	// scan turns x into its prefix sums plus the carry and advances the
	// carry; o keeps the input for the exclusive form.
	scan := func(x reg.VecVirtual) {
		var o reg.VecVirtual
		if excl {
			o = ZMM()
			VMOVDQA64(x, o)
		}
		inLaneScan(l, x, nil, nil, spread, ZMM)
		// b holds each lane's total in every element of that lane. Two
		// shift-and-add steps across lanes (valignq of (b:zero) by 8-2k
		// qwords shifts b up by k lanes, filling with zeros) turn b into
		// the inclusive scan of lane totals; shifted up one more lane it is
		// what each lane of x lacks, and its top lane is the vector total.
		b, t, tot := ZMM(), ZMM(), ZMM()
		VPSHUFB(li, x, b)
		for lanes := 1; lanes < 4; lanes *= 2 {
			VALIGNQ(U8(8-2*lanes), zero, b, t)
			l.add(t, b, b)
		}
		VALIGNQ(U8(6), zero, b, t)
		l.add(t, x, x)
		VSHUFI64X2(U8(0xff), b, b, tot)
		l.add(c, x, x)
		if excl {
			l.sub(o, x, x)
		}
		l.add(tot, c, c)
	}

	advance := advancer(p, dst, n)
	// The first vector, then (when dst is not src) the windowed loop of
	// prefixwindow.go; in place, every vector takes the in-lane scan.
	CMPQ(n, U8(zmmBytes))
	JB(LabelRef(name + "_tail"))
	out0 := ZMM()
	VMOVDQU64(Mem{Base: p}, out0)
	scan(out0)
	VMOVDQU64(out0, Mem{Base: dst})
	advance(zmmBytes)
	zmmWin.loop(l, name, excl, p, dst, n, c, out0, advance, name+"_loop", name+"_tail")

	Label(name + "_loop")
	CMPQ(n, U8(zmmBytes))
	JB(LabelRef(name + "_tail"))
	x := ZMM()
	VMOVDQU64(Mem{Base: p}, x)
	scan(x)
	VMOVDQU64(x, Mem{Base: dst})
	advance(zmmBytes)
	JMP(LabelRef(name + "_loop"))

	Label(name + "_tail")
	TESTQ(n, n)
	JZ(LabelRef(name + "_done"))
	if sh > 0 {
		SHRQ(U8(sh), n) // the mask counts elements
	}
	k := K()
	tailMaskAVX512(n, k)
	// Masked-off elements load as zero, so they add nothing to the sums.
	l.load(Mem{Base: p}, k, x)
	scan(x)
	l.store(x, k, Mem{Base: dst})

	Label(name + "_done")
	r := GP32()
	VMOVD(c.AsX(), r)
	Store(l.ret(r), ReturnIndex(0))
	VZEROUPPER()
	RET()
}
