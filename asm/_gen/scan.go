package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// tabNewlineTable maps a byte's low nibble to the only byte with that low
// nibble that the scan looks for, or to 0xff (which no ASCII byte equals)
// when there is none: vpshufb(table, x) == x exactly for \t, \n and \r.
// Bytes >= 0x80 make vpshufb return 0, which never equals them either.
func tabNewlineTable() Mem {
	m := GLOBL("tabNewline", RODATA|NOPTR)
	for i := 0; i < laneBytes; i++ {
		v := byte(0xff)
		switch i {
		case '\t', '\n', '\r':
			v = byte(i)
		}
		DATA(i, U8(v))
	}
	return m
}

func returnIndex(i, m reg.Register) {
	TZCNTQ(m, m)
	ADDQ(i, m)
	Store(m, ReturnIndex(0))
}

func returnNotFound() {
	r := GP64()
	MOVQ(I32(-1), r)
	Store(r, ReturnIndex(0))
}

// scanAVX2 emits the skeleton shared by the AVX2 search kernels: 64 bytes
// per iteration, then 32, then a page-safe tail. hits computes, for the
// vector x, a 32-bit mask of matching bytes in a general register, or (for
// the 64-byte loop, through any) a vector that is non-zero when any byte
// matches.
type scanAVX2 struct {
	name string
	// match returns a vector whose bytes are 0xff where x matches.
	match func(x reg.VecVirtual) reg.VecVirtual
	// invert is set when match marks the bytes that do NOT match.
	invert bool
}

func (s scanAVX2) emit(p, n reg.Register) {
	name := s.name
	i, rem := GP64(), GP64()
	XORQ(i, i)
	MOVQ(n, rem)
	movmsk := func(v reg.VecVirtual) reg.GPVirtual {
		m := GP64()
		VPMOVMSKB(v, m.As32())
		if s.invert {
			NOTL(m.As32())
		}
		return m
	}

	Label(name + "_loop64")
	CMPQ(rem, U8(zmmBytes))
	JB(LabelRef(name + "_loop32"))
	a := s.match(vload(Mem{Base: p, Index: i, Scale: 1}))
	b := s.match(vload(Mem{Base: p, Index: i, Scale: 1, Disp: ymmBytes}))
	t := YMM()
	if s.invert {
		// Both halves clean when every byte of a AND b is 0xff.
		VPAND(a, b, t)
		m := GP32()
		VPMOVMSKB(t, m)
		CMPL(m, I32(-1))
		JNE(LabelRef(name + "_found64"))
	} else {
		VPOR(a, b, t)
		VPTEST(t, t)
		JNZ(LabelRef(name + "_found64"))
	}
	ADDQ(U8(zmmBytes), i)
	SUBQ(U8(zmmBytes), rem)
	JMP(LabelRef(name + "_loop64"))

	Label(name + "_found64")
	ma, mb := movmsk(a), movmsk(b)
	SHLQ(U8(32), mb)
	ORQ(mb, ma)
	returnIndex(i, ma)
	VZEROUPPER()
	RET()

	Label(name + "_loop32")
	CMPQ(rem, U8(ymmBytes))
	JB(LabelRef(name + "_tail"))
	m := movmsk(s.match(vload(Mem{Base: p, Index: i, Scale: 1})))
	TESTQ(m, m)
	JNZ(LabelRef(name + "_found"))
	ADDQ(U8(ymmBytes), i)
	SUBQ(U8(ymmBytes), rem)

	Label(name + "_tail")
	TESTQ(rem, rem)
	JZ(LabelRef(name + "_none"))
	q, sh, x := GP64(), GP64(), YMM()
	LEAQ(Mem{Base: p, Index: i, Scale: 1}, q)
	tailLoadAVX2(name+"_t", q, rem, x, sh)
	mt := movmsk(s.match(x))
	fixMaskAVX2(mt, sh, rem)
	MOVQ(mt, m)
	TESTQ(m, m)
	JZ(LabelRef(name + "_none"))

	Label(name + "_found")
	returnIndex(i, m)
	VZEROUPPER()
	RET()

	Label(name + "_none")
	returnNotFound()
	VZEROUPPER()
	RET()
}

func vload(m Mem) reg.VecVirtual {
	x := YMM()
	VMOVDQU(m, x)
	return x
}

// scanAVX512 is scanAVX2's AVX-512 counterpart: match sets k (under the
// write mask within, when not nil) for matching bytes of x.
type scanAVX512 struct {
	name  string
	match func(x reg.VecVirtual, within, k reg.OpmaskVirtual)
}

func (s scanAVX512) emit(p, n reg.Register) {
	name := s.name
	i, rem := GP64(), GP64()
	XORQ(i, i)
	MOVQ(n, rem)
	k, m := K(), GP64()

	// Two vectors per iteration, one kortestq for both: with one, the loop
	// (compare into a mask, kortestq, branch, two adds) ran no faster than
	// the AVX2 kernel's two-vector loop at 256 B and 4 KiB (full suite run
	// of 2026-11-22: 41.4 ns against 39.3 ns at 4 KiB).
	k2 := K()
	Label(name + "_loop128")
	CMPQ(rem, U8(2*zmmBytes))
	JB(LabelRef(name + "_loop"))
	x1, x2 := ZMM(), ZMM()
	VMOVDQU64(Mem{Base: p, Index: i, Scale: 1}, x1)
	VMOVDQU64(Mem{Base: p, Index: i, Scale: 1, Disp: zmmBytes}, x2)
	s.match(x1, nil, k)
	s.match(x2, nil, k2)
	KORTESTQ(k, k2)
	JNZ(LabelRef(name + "_found128"))
	ADDQ(U8(2*zmmBytes), i)
	SUBQ(U8(2*zmmBytes), rem)
	JMP(LabelRef(name + "_loop128"))

	Label(name + "_found128")
	KORTESTQ(k, k)
	JNZ(LabelRef(name + "_found"))
	ADDQ(U8(zmmBytes), i)
	KMOVQ(k2, k)
	JMP(LabelRef(name + "_found"))

	Label(name + "_loop")
	CMPQ(rem, U8(zmmBytes))
	JB(LabelRef(name + "_tail"))
	x := ZMM()
	VMOVDQU64(Mem{Base: p, Index: i, Scale: 1}, x)
	s.match(x, nil, k)
	KORTESTQ(k, k)
	JNZ(LabelRef(name + "_found"))
	ADDQ(U8(zmmBytes), i)
	SUBQ(U8(zmmBytes), rem)
	JMP(LabelRef(name + "_loop"))

	Label(name + "_tail")
	TESTQ(rem, rem)
	JZ(LabelRef(name + "_none"))
	kt := K()
	tailMaskAVX512(rem, kt)
	VMOVDQU8_Z(Mem{Base: p, Index: i, Scale: 1}, kt, x)
	s.match(x, kt, k)
	KORTESTQ(k, k)
	JZ(LabelRef(name + "_none"))

	Label(name + "_found")
	KMOVQ(k, m)
	returnIndex(i, m)
	VZEROUPPER()
	RET()

	Label(name + "_none")
	returnNotFound()
	VZEROUPPER()
	RET()
}

func tabNewlineAVX2(tbl Mem) {
	kernel("indexTabNewlineAVX2", "func(b []byte) int")
	Doc("indexTabNewlineAVX2 is the AVX2 kernel of IndexTabNewline; len(b) > 0.")
	p := Load(Param("b").Base(), GP64())
	n := Load(Param("b").Len(), GP64())
	t := YMM()
	VBROADCASTI128(tbl, t)
	scanAVX2{name: "tabNewlineAVX2", match: func(x reg.VecVirtual) reg.VecVirtual {
		y := YMM()
		VPSHUFB(x, t, y)
		VPCMPEQB(x, y, y)
		return y
	}}.emit(p, n)
}

func tabNewlineAVX512(tbl Mem) {
	kernel("indexTabNewlineAVX512", "func(b []byte) int")
	Doc("indexTabNewlineAVX512 is the AVX-512 kernel of IndexTabNewline; len(b) > 0.")
	p := Load(Param("b").Base(), GP64())
	n := Load(Param("b").Len(), GP64())
	t := ZMM()
	VBROADCASTI32X4(tbl, t)
	scanAVX512{name: "tabNewlineAVX512", match: func(x reg.VecVirtual, within, k reg.OpmaskVirtual) {
		y := ZMM()
		VPSHUFB(x, t, y)
		if within == nil {
			VPCMPEQB(x, y, k)
		} else {
			VPCMPEQB(x, y, within, k)
		}
	}}.emit(p, n)
}

// rangeParams broadcasts lo and hi-lo: a byte x is in [lo, hi] exactly when
// the wrapping difference x-lo is at most hi-lo as an unsigned number.
func rangeParams(alloc func() reg.VecVirtual) (lo, span reg.VecVirtual) {
	l := Load(Param("lo"), GP32())
	h := Load(Param("hi"), GP32())
	SUBL(l, h)
	lo, span = alloc(), alloc()
	xl, xh := XMM(), XMM()
	VMOVD(l, xl)
	VMOVD(h, xh)
	VPBROADCASTB(xl, lo)
	VPBROADCASTB(xh, span)
	return lo, span
}

const rangeSig = "func(b []byte, lo, hi byte) int"

func notInRangeAVX2() {
	kernel("indexNotInRangeAVX2", rangeSig)
	Doc("indexNotInRangeAVX2 is the AVX2 kernel of IndexNotInRange; len(b) > 0, lo <= hi.")
	p := Load(Param("b").Base(), GP64())
	n := Load(Param("b").Len(), GP64())
	lo, span := rangeParams(YMM)
	scanAVX2{name: "notInRangeAVX2", invert: true, match: func(x reg.VecVirtual) reg.VecVirtual {
		// AVX2 has no unsigned byte compare: d <= span iff min(d, span) == d.
		d, m := YMM(), YMM()
		VPSUBB(lo, x, d)
		VPMINUB(span, d, m)
		VPCMPEQB(d, m, m)
		return m
	}}.emit(p, n)
}

// vpcmpub predicates.
const (
	cmpLE = 2 // less than or equal
	cmpGT = 6 // "not less or equal"
)

func notInRangeAVX512() {
	kernel("indexNotInRangeAVX512", rangeSig)
	Doc("indexNotInRangeAVX512 is the AVX-512 kernel of IndexNotInRange; len(b) > 0, lo <= hi.")
	p := Load(Param("b").Base(), GP64())
	n := Load(Param("b").Len(), GP64())
	lo, span := rangeParams(ZMM)
	scanAVX512{name: "notInRangeAVX512", match: func(x reg.VecVirtual, within, k reg.OpmaskVirtual) {
		d := ZMM()
		VPSUBB(lo, x, d)
		if within == nil {
			VPCMPUB(U8(cmpGT), span, d, k)
		} else {
			VPCMPUB(U8(cmpGT), span, d, within, k)
		}
	}}.emit(p, n)
}
