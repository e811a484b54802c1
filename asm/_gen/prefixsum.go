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
	}
}

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

// inLaneScan runs the shift-and-add steps inside each 128-bit lane:
// shifting by 1, 2, 4... elements and adding leaves every element holding
// the sum of its lane up to itself.
func inLaneScan(l *lane, x reg.VecVirtual, alloc func() reg.VecVirtual) {
	for s := l.bytes(); s < laneBytes; s *= 2 {
		t := alloc()
		VPSLLDQ(U8(s), x, t)
		l.add(t, x, x)
	}
}

func prefixSumAVX2(l *lane, excl bool) {
	name := prefixSumName(l, excl, "AVX2")
	TEXT(name, NOSPLIT, prefixSumSig(l))
	Doc(name+" is an AVX2 prefix-sum kernel. It processes the whole 32-byte",
		"vectors of src (the caller finishes the rest) and returns the carry.")
	dst := Load(Param("dst").Base(), GP64())
	p := Load(Param("src").Base(), GP64())
	n := Load(Param("src").Len(), GP64())
	carry := Load(Param("carry"), GP32())
	if sh := map[int]int{8: 0, 16: 1, 32: 2}[l.bits]; sh > 0 {
		SHLQ(U8(sh), n) // elements to bytes
	}
	c, li := YMM(), YMM()
	cx := XMM()
	VMOVD(carry, cx)
	l.bcast(cx, c)
	VBROADCASTI128(l.lastIdx, li)

	Label(name + "_loop")
	CMPQ(n, U8(ymmBytes))
	JB(LabelRef(name + "_done"))
	x := YMM()
	VMOVDQU(Mem{Base: p}, x)
	inLaneScan(l, x, YMM)
	// Cross the lane boundary: add lane 0's total to every element of
	// lane 1 (vperm2i128 imm 0x08: low lane zero, high lane = lane 0).
	b := YMM()
	VPSHUFB(li, x, b)
	VPERM2I128(U8(0x08), b, b, b)
	l.add(b, x, x)
	// The vector's own total, broadcast, is taken before the carry is
	// added so that the loop-carried dependency is one add per vector.
	tot := YMM()
	VPSHUFB(li, x, tot)
	VPERMQ(U8(0xff), tot, tot)
	l.add(c, x, x)
	if excl {
		l.sub(Mem{Base: p}, x, x)
	}
	VMOVDQU(x, Mem{Base: dst})
	l.add(tot, c, c)
	ADDQ(U8(ymmBytes), p)
	ADDQ(U8(ymmBytes), dst)
	SUBQ(U8(ymmBytes), n)
	JMP(LabelRef(name + "_loop"))

	Label(name + "_done")
	r := GP32()
	VMOVD(c.AsX(), r)
	Store(l.ret(r), ReturnIndex(0))
	VZEROUPPER()
	RET()
}

func prefixSumAVX512(l *lane, excl bool) {
	name := prefixSumName(l, excl, "AVX512")
	TEXT(name, NOSPLIT, prefixSumSig(l))
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
	VPXORQ(zero, zero, zero)

	// scan turns x into its prefix sums plus the carry and advances the
	// carry; o keeps the input for the exclusive form.
	scan := func(x reg.VecVirtual) {
		var o reg.VecVirtual
		if excl {
			o = ZMM()
			VMOVDQA64(x, o)
		}
		inLaneScan(l, x, ZMM)
		// Two more shift-and-add steps, by one and by two 128-bit lanes,
		// each adding the broadcast last element of the lane below.
		for lanes := 1; lanes < 4; lanes *= 2 {
			b := ZMM()
			VPSHUFB(li, x, b)
			// valignq of (b:zero) by 8-2*lanes qwords shifts b up by
			// that many lanes, filling with zeros.
			VALIGNQ(U8(8-2*lanes), zero, b, b)
			l.add(b, x, x)
		}
		tot := ZMM()
		VPSHUFB(li, x, tot)
		VSHUFI64X2(U8(0xff), tot, tot, tot)
		l.add(c, x, x)
		if excl {
			l.sub(o, x, x)
		}
		l.add(tot, c, c)
	}

	Label(name + "_loop")
	CMPQ(n, U8(zmmBytes))
	JB(LabelRef(name + "_tail"))
	x := ZMM()
	VMOVDQU64(Mem{Base: p}, x)
	scan(x)
	VMOVDQU64(x, Mem{Base: dst})
	ADDQ(U8(zmmBytes), p)
	ADDQ(U8(zmmBytes), dst)
	SUBQ(U8(zmmBytes), n)
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
