package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// Offsets into the ClassTable's k array (see asm/classify.go).
const (
	tabLo  = 0  // 16 entries indexed by the low nibble
	tabHi  = 16 // 16 entries indexed by the high nibble
	tabSel = 32 // one selector byte per class
	// maxClasses is the number of selector bytes.
	maxClasses = 8
	nibbleMask = 0x0f
)

const classifySig = "func(dst []uint64, src []byte, tab *[48]byte, classes int)"

// nibbleLookup returns lo[x&15] & hi[x>>4] for every byte of x. vpshufb
// returns zero for index bytes with bit 7 set, so both indexes are masked
// to four bits first.
func nibbleLookup(x, loTab, hiTab, nib reg.VecVirtual, wide bool) reg.VecVirtual {
	alloc, and := YMM, func(a, b, c Op) { VPAND(a, b, c) }
	if wide {
		alloc, and = ZMM, func(a, b, c Op) { VPANDQ(a, b, c) }
	}
	l, h := alloc(), alloc()
	and(nib, x, l)
	VPSHUFB(l, loTab, l)
	VPSRLW(Imm(4), x, h)
	and(nib, h, h)
	VPSHUFB(h, hiTab, h)
	and(l, h, l)
	return l
}

func broadcastByte(v byte, dst reg.VecVirtual) {
	t := GP32()
	MOVL(U32(uint32(v)), t)
	x := XMM()
	VMOVD(t, x)
	VPBROADCASTB(x, dst)
}

func classifyAVX2() {
	kernel("classifyAVX2", classifySig)
	Doc("classifyAVX2 is the AVX2 kernel of Classify: len(src) > 0, len(dst) ==",
		"ClassifiedLen(len(src), classes), 1 <= classes <= 8.")
	dst := Load(Param("dst").Base(), GP64())
	p := Load(Param("src").Base(), GP64())
	n := Load(Param("src").Len(), GP64())
	tab := Load(Param("tab"), GP64())
	classes := Load(Param("classes"), GP64())

	loTab, hiTab, nib, sat := YMM(), YMM(), YMM(), YMM()
	VBROADCASTI128(Mem{Base: tab, Disp: tabLo}, loTab)
	VBROADCASTI128(Mem{Base: tab, Disp: tabHi}, hiTab)
	broadcastByte(nibbleMask, nib)
	broadcastByte(0x7f, sat)
	// All eight selectors stay in registers, as in the AVX-512 kernel:
	// broadcasting one per class and block from memory cost two of the
	// ~50 instructions a block took. (16 YMM registers hold the three
	// tables, 0x7f, eight selectors and the four vectors a block needs.)
	var sel [maxClasses]reg.VecVirtual
	for c := range sel {
		sel[c] = YMM()
		VPBROADCASTB(Mem{Base: tab, Disp: tabSel + c}, sel[c])
	}

	// masks writes one mask word per class for the 64 bytes held in the
	// lookups va (bytes 0..31) and vb (32..63); fix, if set, repairs each
	// 32-bit half of a tail.
	//
	// nc is the number of classes, or 0 for a count read at run time
	// (the tail, taken once a call).
	masks := func(label string, nc int, va, vb reg.VecVirtual, fix func(ma, mb reg.GPVirtual)) {
		t := YMM()
		ma, mb := GP64(), GP64()
		for c := 0; c < maxClasses; c++ {
			if nc == 0 {
				CMPQ(classes, U8(c))
				JBE(LabelRef(label))
			} else if c == nc {
				break
			}
			// A byte is in the class when lookup & selector is not
			// zero; adding 0x7f with unsigned saturation sets bit 7
			// exactly then, which vpmovmskb collects (no compare
			// against zero and no inversion after it).
			VPAND(va, sel[c], t)
			VPADDUSB(sat, t, t)
			VPMOVMSKB(t, ma.As32())
			VPAND(vb, sel[c], t)
			VPADDUSB(sat, t, t)
			VPMOVMSKB(t, mb.As32())
			if fix != nil {
				fix(ma, mb)
			}
			// Each half is one 32-bit store (little-endian: bytes
			// 0..31 are the word's low half), not a shift and an OR.
			MOVL(ma.As32(), Mem{Base: dst, Disp: 8 * c})
			MOVL(mb.As32(), Mem{Base: dst, Disp: 8*c + 4})
		}
		if nc == 0 {
			Label(label)
		}
	}

	classLoops("classifyAVX2", classes, n, func(nc int) {
		a, b := YMM(), YMM()
		VMOVDQU(Mem{Base: p}, a)
		VMOVDQU(Mem{Base: p, Disp: ymmBytes}, b)
		masks("", nc, nibbleLookup(a, loTab, hiTab, nib, false), nibbleLookup(b, loTab, hiTab, nib, false), nil)
		ADDQ(U8(zmmBytes), p)
		ADDQ(U8(8*nc), dst)
	})
	a, b := YMM(), YMM()

	Label("classifyAVX2_tail")
	TESTQ(n, n)
	JZ(LabelRef("classifyAVX2_ret"))
	// 1..63 bytes remain: half a is p[0:ra] (shifted by sha), half b is
	// p[32:32+rb] (shifted by shb), either possibly partial or empty.
	ra, sha, rb, shb := GP64(), GP64(), GP64(), GP64()
	CMPQ(n, U8(ymmBytes))
	JB(LabelRef("classifyAVX2_short"))
	VMOVDQU(Mem{Base: p}, a)
	MOVQ(U32(ymmBytes), ra)
	XORQ(sha, sha)
	MOVQ(n, rb)
	SUBQ(U8(ymmBytes), rb)
	JZ(LabelRef("classifyAVX2_bempty"))
	q := GP64()
	LEAQ(Mem{Base: p, Disp: ymmBytes}, q)
	tailLoadAVX2("classifyAVX2_b", q, rb, b, shb)
	JMP(LabelRef("classifyAVX2_go"))
	Label("classifyAVX2_short")
	MOVQ(n, ra)
	tailLoadAVX2("classifyAVX2_a", p, ra, a, sha)
	XORQ(rb, rb)
	Label("classifyAVX2_bempty")
	VPXOR(b, b, b)
	XORQ(shb, shb)
	Label("classifyAVX2_go")
	masks("classifyAVX2_ret", 0, nibbleLookup(a, loTab, hiTab, nib, false), nibbleLookup(b, loTab, hiTab, nib, false),
		func(ma, mb reg.GPVirtual) {
			fixMaskAVX2(ma, sha, ra)
			fixMaskAVX2(mb, shb, rb)
		})
	VZEROUPPER()
	RET()
}

func classifyAVX512() {
	kernel("classifyAVX512", classifySig)
	Doc("classifyAVX512 is the AVX-512 kernel of Classify, with the contract of classifyAVX2.")
	dst := Load(Param("dst").Base(), GP64())
	p := Load(Param("src").Base(), GP64())
	n := Load(Param("src").Len(), GP64())
	tab := Load(Param("tab"), GP64())
	classes := Load(Param("classes"), GP64())

	loTab, hiTab, nib := ZMM(), ZMM(), ZMM()
	VBROADCASTI32X4(Mem{Base: tab, Disp: tabLo}, loTab)
	VBROADCASTI32X4(Mem{Base: tab, Disp: tabHi}, hiTab)
	broadcastByte(nibbleMask, nib)
	// All eight selectors stay in registers; unused ones are zero.
	var sel [maxClasses]reg.VecVirtual
	for c := range sel {
		sel[c] = ZMM()
		VPBROADCASTB(Mem{Base: tab, Disp: tabSel + c}, sel[c])
	}
	// masks is the AVX2 kernel's, for one 64-byte vector; within, if
	// set, masks off the lanes past a tail.
	masks := func(label string, nc int, v reg.VecVirtual, within reg.OpmaskVirtual) {
		k, m := K(), GP64()
		for c := 0; c < maxClasses; c++ {
			if nc == 0 {
				CMPQ(classes, U8(c))
				JBE(LabelRef(label))
			} else if c == nc {
				break
			}
			if within == nil {
				VPTESTMB(sel[c], v, k)
			} else {
				VPTESTMB(sel[c], v, within, k)
			}
			KMOVQ(k, m)
			MOVQ(m, Mem{Base: dst, Disp: 8 * c})
		}
		if nc == 0 {
			Label(label)
		}
	}

	classLoops("classifyAVX512", classes, n, func(nc int) {
		x := ZMM()
		VMOVDQU64(Mem{Base: p}, x)
		masks("", nc, nibbleLookup(x, loTab, hiTab, nib, true), nil)
		ADDQ(U8(zmmBytes), p)
		ADDQ(U8(8*nc), dst)
	})
	x := ZMM()

	Label("classifyAVX512_tail")
	TESTQ(n, n)
	JZ(LabelRef("classifyAVX512_ret"))
	// Masked-off lanes load as zero and are excluded from every mask by
	// testing under the tail mask.
	kt := K()
	tailMaskAVX512(n, kt)
	VMOVDQU8_Z(Mem{Base: p}, kt, x)
	masks("classifyAVX512_ret", 0, nibbleLookup(x, loTab, hiTab, nib, true), kt)
	VZEROUPPER()
	RET()
}

// classLoops emits the whole-block loops of a Classify kernel, one for each
// class count: the count is fixed for a call, so each loop writes its
// masks without testing the count class by class (two instructions a
// class and block, of about 20 a block with AVX-512 and 40 with AVX2).
// block emits one block's work for nc classes and advances the source and
// destination pointers; the loops test the remaining length at the bottom,
// and every one leaves for name_tail, which must follow.
func classLoops(name string, classes, n reg.Register, block func(nc int)) {
	loop := func(nc int) string { return fmt.Sprintf("%s_loop%d", name, nc) }
	for nc := 1; nc < maxClasses; nc++ {
		CMPQ(classes, U8(nc))
		JEQ(LabelRef(loop(nc)))
	}
	// n counts down from 64 less than what is left, so the subtraction's
	// borrow ends the loop (no compare), and 64 is added back for the tail.
	for nc := maxClasses; nc >= 1; nc-- {
		Label(loop(nc))
		SUBQ(U8(zmmBytes), n)
		JB(LabelRef(name + "_rest"))
		Label(loop(nc) + "_body")
		block(nc)
		SUBQ(U8(zmmBytes), n)
		JAE(LabelRef(loop(nc) + "_body"))
		JMP(LabelRef(name + "_rest"))
	}
	Label(name + "_rest")
	ADDQ(U8(zmmBytes), n)
}
