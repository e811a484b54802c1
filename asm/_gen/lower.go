package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

const (
	caseBit     = 0x20 // 'a' - 'A'
	letterCount = 26
)

const lowerSig = "func(dst, src []byte)"

func toLowerAVX2() {
	kernel("toLowerAVX2", lowerSig)
	Doc("toLowerAVX2 is the AVX2 kernel of ToLower; len(dst) == len(src) >= 32.",
		"The last vector overlaps the one before it; lower-casing twice is harmless.")
	d := Load(Param("dst").Base(), GP64())
	s := Load(Param("src").Base(), GP64())
	n := Load(Param("src").Len(), GP64())
	a, z, bit := YMM(), YMM(), YMM()
	broadcastByte('A', a)
	broadcastByte(letterCount-1, z)
	broadcastByte(caseBit, bit)
	lower := func(off reg.Register) {
		x, t, m := YMM(), YMM(), YMM()
		VMOVDQU(Mem{Base: s, Index: off, Scale: 1}, x)
		// x is an upper-case letter iff x-'A' <= 25 unsigned.
		VPSUBB(a, x, t)
		VPMINUB(z, t, m)
		VPCMPEQB(t, m, m)
		VPAND(bit, m, m)
		VPOR(m, x, x)
		VMOVDQU(x, Mem{Base: d, Index: off, Scale: 1})
	}
	i := GP64()
	XORQ(i, i)
	SUBQ(U8(ymmBytes), n) // n is now the offset of the last whole vector
	Label("toLowerAVX2_loop")
	CMPQ(i, n)
	JAE(LabelRef("toLowerAVX2_last"))
	lower(i)
	ADDQ(U8(ymmBytes), i)
	JMP(LabelRef("toLowerAVX2_loop"))
	Label("toLowerAVX2_last")
	lower(n)
	VZEROUPPER()
	RET()
}

func toLowerAVX512() {
	kernel("toLowerAVX512", lowerSig)
	Doc("toLowerAVX512 is the AVX-512 kernel of ToLower; len(dst) == len(src) > 0.")
	d := Load(Param("dst").Base(), GP64())
	s := Load(Param("src").Base(), GP64())
	n := Load(Param("src").Len(), GP64())
	a, z, bit := ZMM(), ZMM(), ZMM()
	broadcastByte('A', a)
	broadcastByte(letterCount-1, z)
	broadcastByte(caseBit, bit)
	lower := func(x reg.VecVirtual) {
		t, k := ZMM(), K()
		VPSUBB(a, x, t)
		VPCMPUB(U8(cmpLE), z, t, k)
		VPADDB(bit, x, k, x) // add the case bit to upper-case letters only
	}
	x := ZMM()
	Label("toLowerAVX512_loop")
	CMPQ(n, U8(zmmBytes))
	JB(LabelRef("toLowerAVX512_tail"))
	VMOVDQU64(Mem{Base: s}, x)
	lower(x)
	VMOVDQU64(x, Mem{Base: d})
	ADDQ(U8(zmmBytes), s)
	ADDQ(U8(zmmBytes), d)
	SUBQ(U8(zmmBytes), n)
	JMP(LabelRef("toLowerAVX512_loop"))
	Label("toLowerAVX512_tail")
	TESTQ(n, n)
	JZ(LabelRef("toLowerAVX512_ret"))
	k := K()
	tailMaskAVX512(n, k)
	VMOVDQU8_Z(Mem{Base: s}, k, x)
	lower(x)
	VMOVDQU8(x, k, Mem{Base: d})
	Label("toLowerAVX512_ret")
	VZEROUPPER()
	RET()
}
