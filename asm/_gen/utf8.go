package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// UTF-8 validation after Keiser and Lemire, "Validating UTF-8 in less than
// one instruction per byte" (Software: Practice and Experience, 2021), the
// "lookup" algorithm. Every error of a UTF-8 sequence shows in the first two
// bytes of a pair (a byte and the one before it), except the continuation
// count of 3- and 4-byte sequences. Three 16-entry tables, indexed by the
// previous byte's high nibble, its low nibble and the current byte's high
// nibble, give for each error kind one bit; the AND of the three lookups is
// non-zero exactly where a pair is wrong. The one pair the tables cannot
// judge, two continuation bytes in a row, is marked twoConts and is an error
// unless the byte two or three places back leads a 3- or 4-byte sequence.
//
// The error kinds, one bit each (names after the paper):
const (
	tooShort   = 1 << 0 // a lead byte followed by a lead byte or ASCII: 11______ 0_______ / 11______ 11______
	tooLong    = 1 << 1 // ASCII followed by a continuation: 0_______ 10______
	overlong3  = 1 << 2 // 11100000 100_____
	tooLarge   = 1 << 3 // above U+10FFFF: 11110100 1001____, 11110100 101_____, 11110101.. 1001____ ...
	surrogate  = 1 << 4 // U+D800..U+DFFF: 11101101 101_____
	overlong2  = 1 << 5 // 1100000_ 10______
	twoConts   = 1 << 7 // 10______ 10______
	tooLarge10 = 1 << 6 // above U+10FFFF with 1000____ second byte: 11110101 1000____ and higher leads
	overlong4  = 1 << 6 // 11110000 1000____ (shares the bit: its lead's low nibble differs)
	// carry is every kind whose first byte says nothing about its low nibble.
	carry = tooShort | tooLong | twoConts
)

// utf8Tables are the three lookups, indexed by a nibble.
var utf8Tables = [3][16]byte{
	// byte 1 (the previous byte), high nibble
	{
		tooLong, tooLong, tooLong, tooLong, tooLong, tooLong, tooLong, tooLong, // 0_______ ASCII
		twoConts, twoConts, twoConts, twoConts, // 10______ continuation
		tooShort | overlong2,             // 1100____ 2-byte lead, C0 and C1 overlong
		tooShort,                         // 1101____ 2-byte lead
		tooShort | overlong3 | surrogate, // 1110____ 3-byte lead
		tooShort | tooLarge | tooLarge10 | overlong4, // 1111____ 4-byte lead or invalid
	},
	// byte 1, low nibble
	{
		carry | overlong3 | overlong2 | overlong4, // ____0000
		carry | overlong2,                         // ____0001
		carry,                                     // ____0010
		carry,                                     // ____0011
		carry | tooLarge,                          // ____0100 (F4: only 1000____ may follow)
		carry | tooLarge | tooLarge10,             // ____0101
		carry | tooLarge | tooLarge10,
		carry | tooLarge | tooLarge10,
		carry | tooLarge | tooLarge10, // ____1___
		carry | tooLarge | tooLarge10,
		carry | tooLarge | tooLarge10,
		carry | tooLarge | tooLarge10,
		carry | tooLarge | tooLarge10,
		carry | tooLarge | tooLarge10 | surrogate, // ____1101 (ED)
		carry | tooLarge | tooLarge10,
		carry | tooLarge | tooLarge10,
	},
	// byte 2 (the current byte), high nibble
	{
		tooShort, tooShort, tooShort, tooShort, tooShort, tooShort, tooShort, tooShort, // 0_______
		tooLong | overlong2 | twoConts | overlong3 | tooLarge10 | overlong4, // 1000____
		tooLong | overlong2 | twoConts | overlong3 | tooLarge,               // 1001____
		tooLong | overlong2 | twoConts | surrogate | tooLarge,               // 1010____
		tooLong | overlong2 | twoConts | surrogate | tooLarge,               // 1011____
		tooShort, tooShort, tooShort, tooShort, // 11______
	},
}

const (
	// thirdByteSub and fourthByteSub: a byte minus these, saturating, has
	// its high bit set exactly when it is >= 0xE0 (leads a 3- or 4-byte
	// sequence) or >= 0xF0 (leads a 4-byte sequence).
	thirdByteSub  = 0xe0 - 0x80
	fourthByteSub = 0xf0 - 0x80
	highBit       = 0x80
	// lastLead3, lastLead2, lastLead1: a vector's last bytes must stay
	// below these, or the sequence they lead continues into the next
	// vector (which must then start with continuation bytes).
	lastLead3 = 0xf0 - 1 // third from last: a 4-byte lead needs 3 more
	lastLead2 = 0xe0 - 1 // second from last: a 3- or 4-byte lead
	lastLead1 = 0xc0 - 1 // last: any lead
)

// utf8Data emits the tables (one 16-byte lane each, broadcast to every
// lane), the per-vector "incomplete at the end" limits for both widths, and
// the byte masks of the AVX2 tail load.
func utf8Data() (tabs [3]Mem, inc32, inc64, tailMask Mem) {
	for t := range utf8Tables {
		tabs[t] = GLOBL([]string{"utf8Byte1High", "utf8Byte1Low", "utf8Byte2High"}[t], RODATA|NOPTR)
		for i, v := range utf8Tables[t] {
			DATA(i, U8(v))
		}
	}
	incomplete := func(name string, n int) Mem {
		m := GLOBL(name, RODATA|NOPTR)
		for i := 0; i < n; i++ {
			v := byte(0xff)
			switch n - i {
			case 3:
				v = lastLead3
			case 2:
				v = lastLead2
			case 1:
				v = lastLead1
			}
			DATA(i, U8(v))
		}
		return m
	}
	inc32 = incomplete("utf8Incomplete32", ymmBytes)
	inc64 = incomplete("utf8Incomplete64", zmmBytes)
	// tailMask: 32 bytes of 0xff then 32 of 0x00; the 32 bytes at
	// tailMask+32-r keep exactly the first r lanes.
	tailMask = GLOBL("utf8TailMask", RODATA|NOPTR)
	for i := 0; i < 2*ymmBytes; i++ {
		v := byte(0)
		if i < ymmBytes {
			v = 0xff
		}
		DATA(i, U8(v))
	}
	return tabs, inc32, inc64, tailMask
}

// utf8Vec is the width-independent part of the check, over YMM (AVX2) or
// ZMM (AVX-512) registers.
type utf8Vec struct {
	alloc func() reg.VecVirtual
	// join returns a vector each of whose 128-bit lanes holds the stream's
	// lane before the same lane of x (p, the previous vector, supplies the
	// first), for vpalignr to shift bytes in across lane boundaries.
	join func(x, p reg.VecVirtual) reg.VecVirtual
	// tabs are the three lookup tables and nib the 0x0f bytes, in
	// registers; sub3, sub4 and high are the constants above, in registers
	// or memory.
	tabs             [3]reg.VecVirtual
	nib              reg.VecVirtual
	sub3, sub4, high Op
	and, or, xor     func(a, b, dst Op)
	and3             func(a, b, c, dst reg.VecVirtual)
}

// prev returns x shifted up by n (1..3) bytes in stream order, with the
// bytes before it taken from j = join(x, prevIn).
func (v utf8Vec) prev(x, j reg.VecVirtual, n int) reg.VecVirtual {
	d := v.alloc()
	VPALIGNR(U8(laneBytes-n), j, x, d)
	return d
}

// check ORs into errs the errors of the vector x, whose stream predecessor
// is prevIn.
func (v utf8Vec) check(x, prevIn, errs reg.VecVirtual) {
	hi2 := v.alloc()
	VPSRLW(U8(4), x, hi2)
	v.and(v.nib, hi2, hi2)
	VPSHUFB(hi2, v.tabs[2], hi2)
	j := v.join(x, prevIn)
	p1 := v.prev(x, j, 1)
	hi1, lo1 := v.alloc(), v.alloc()
	VPSRLW(U8(4), p1, hi1)
	v.and(v.nib, hi1, hi1)
	v.and(v.nib, p1, lo1)
	VPSHUFB(hi1, v.tabs[0], hi1)
	VPSHUFB(lo1, v.tabs[1], lo1)
	sc := v.alloc()
	v.and3(hi1, lo1, hi2, sc)
	// must23: the byte two back leads a 3/4-byte sequence, or the byte
	// three back a 4-byte one; exactly there twoConts is expected (and
	// required: a missing continuation is a tooShort of its own pair).
	p2, p3 := v.prev(x, j, 2), v.prev(x, j, 3)
	VPSUBUSB(v.sub3, p2, p2)
	VPSUBUSB(v.sub4, p3, p3)
	v.or(p2, p3, p2)
	v.and(v.high, p2, p2)
	v.xor(sc, p2, p2)
	v.or(p2, errs, errs)
}

const utf8Sig = "func(b []byte) bool"

func validUTF8AVX2(tabs [3]Mem, inc, tailMask Mem, consts utf8Consts) {
	kernel("validUTF8AVX2", utf8Sig)
	Doc("validUTF8AVX2 is the AVX2 kernel of ValidUTF8; any length.")
	p := Load(Param("b").Base(), GP64())
	n := Load(Param("b").Len(), GP64())
	// AVX2 has 16 vector registers: the tables, the nibble mask and the
	// loop state stay in registers, the other constants are memory
	// operands.
	v := utf8Vec{alloc: YMM,
		and: func(a, b, dst Op) { VPAND(a, b, dst) },
		or:  func(a, b, dst Op) { VPOR(a, b, dst) },
		xor: func(a, b, dst Op) { VPXOR(a, b, dst) },
		and3: func(a, b, c, dst reg.VecVirtual) {
			VPAND(a, b, dst)
			VPAND(c, dst, dst)
		},
		// prevIn's high lane below x's low lane (vperm2i128 selector
		// 0x21: low half from the second source's high lane, high half
		// from the first source's low lane).
		join: func(x, p reg.VecVirtual) reg.VecVirtual {
			j := YMM()
			VPERM2I128(U8(0x21), x, p, j)
			return j
		},
		sub3: consts.sub3, sub4: consts.sub4, high: consts.high,
	}
	for i := range v.tabs {
		v.tabs[i] = YMM()
		VBROADCASTI128(tabs[i], v.tabs[i])
	}
	v.nib = YMM()
	broadcastByte(nibbleMask, v.nib)
	incMax := inc

	prevIn, prevInc, errs := YMM(), YMM(), YMM()
	VPXOR(prevIn, prevIn, prevIn)
	VPXOR(prevInc, prevInc, prevInc)
	VPXOR(errs, errs, errs)
	m := GP32()
	x := YMM()

	Label("utf8AVX2_loop")
	CMPQ(n, U8(ymmBytes))
	JB(LabelRef("utf8AVX2_tail"))
	VMOVDQU(Mem{Base: p}, x)
	VPMOVMSKB(x, m)
	TESTL(m, m)
	JNZ(LabelRef("utf8AVX2_multi"))
	// All ASCII: nothing to check but that the previous vector did not
	// end inside a sequence.
	VPOR(prevInc, errs, errs)
	VMOVDQU(x, prevIn)
	ADDQ(U8(ymmBytes), p)
	SUBQ(U8(ymmBytes), n)
	JMP(LabelRef("utf8AVX2_loop"))

	Label("utf8AVX2_multi")
	v.check(x, prevIn, errs)
	VPSUBUSB(incMax, x, prevInc)
	VMOVDQU(x, prevIn)
	ADDQ(U8(ymmBytes), p)
	SUBQ(U8(ymmBytes), n)
	JMP(LabelRef("utf8AVX2_loop"))

	Label("utf8AVX2_tail")
	TESTQ(n, n)
	JNZ(LabelRef("utf8AVX2_partial"))
	VPOR(prevInc, errs, errs)
	JMP(LabelRef("utf8AVX2_done"))

	Label("utf8AVX2_partial")
	// The last 1..31 bytes, zero-padded. The zero padding is ASCII, so a
	// sequence cut short by the end of the input is a tooShort error of
	// this vector, and nothing can be incomplete after it. The 32-byte
	// load stays inside the 4 KiB block of the tail's first byte: forwards
	// from p when that fits, and then a byte mask clears the lanes past
	// the end; else backwards from the end, and the bytes go through the
	// stack to move them down to lane 0 (AVX2 has no cross-lane variable
	// byte shift): stored below 32 zero bytes, then reloaded at 32-n.
	off, mt := GP64(), GP64()
	MOVQ(p, off)
	ANDQ(U32(pageBlock-1), off)
	CMPQ(off, U32(pageBlock-ymmBytes))
	JA(LabelRef("utf8AVX2_back"))
	VMOVDQU(Mem{Base: p}, x)
	LEAQ(tailMask.Offset(ymmBytes), mt)
	SUBQ(n, mt)
	VPAND(Mem{Base: mt}, x, x)
	JMP(LabelRef("utf8AVX2_loaded"))
	Label("utf8AVX2_back")
	scratch := AllocLocal(2 * ymmBytes)
	z := YMM()
	VPXOR(z, z, z)
	VMOVDQU(z, scratch.Offset(ymmBytes))
	VMOVDQU(Mem{Base: p, Index: n, Scale: 1, Disp: -ymmBytes}, x)
	VMOVDQU(x, scratch)
	LEAQ(scratch.Offset(ymmBytes), mt)
	SUBQ(n, mt)
	VMOVDQU(Mem{Base: mt}, x)
	Label("utf8AVX2_loaded")
	v.check(x, prevIn, errs)

	Label("utf8AVX2_done")
	ok := GP8()
	VPTEST(errs, errs)
	SETEQ(ok)
	Store(ok, ReturnIndex(0))
	VZEROUPPER()
	RET()
}

func validUTF8AVX512(tabs [3]Mem, inc Mem) {
	kernel("validUTF8AVX512", utf8Sig)
	Doc("validUTF8AVX512 is the AVX-512 kernel of ValidUTF8; any length.")
	p := Load(Param("b").Base(), GP64())
	n := Load(Param("b").Len(), GP64())
	v := utf8Vec{alloc: ZMM,
		and: func(a, b, dst Op) { VPANDQ(a, b, dst) },
		or:  func(a, b, dst Op) { VPORQ(a, b, dst) },
		xor: func(a, b, dst Op) { VPXORQ(a, b, dst) },
		and3: func(a, b, c, dst reg.VecVirtual) {
			VMOVDQA64(a, dst)
			VPTERNLOGD(U8(ternAnd3), c, b, dst)
		},
		// Dwords 12..15 of p, then dwords 0..11 of x.
		join: func(x, p reg.VecVirtual) reg.VecVirtual {
			j := ZMM()
			VALIGND(U8((zmmBytes-laneBytes)/dwordBytes), p, x, j)
			return j
		},
	}
	for i := range v.tabs {
		v.tabs[i] = ZMM()
		VBROADCASTI32X4(tabs[i], v.tabs[i])
	}
	nib, sub3, sub4, high := ZMM(), ZMM(), ZMM(), ZMM()
	broadcastByte(nibbleMask, nib)
	broadcastByte(thirdByteSub, sub3)
	broadcastByte(fourthByteSub, sub4)
	broadcastByte(highBit, high)
	v.nib, v.sub3, v.sub4, v.high = nib, sub3, sub4, high
	incMax := ZMM()
	VMOVDQU64(inc, incMax)

	prevIn, prevInc, errs := ZMM(), ZMM(), ZMM()
	VPXORQ(prevIn, prevIn, prevIn)
	VPXORQ(prevInc, prevInc, prevInc)
	VPXORQ(errs, errs, errs)
	k := K()
	x := ZMM()

	Label("utf8AVX512_loop")
	CMPQ(n, U8(zmmBytes))
	JB(LabelRef("utf8AVX512_tail"))
	VMOVDQU64(Mem{Base: p}, x)
	VPMOVB2M(x, k)
	KORTESTQ(k, k)
	JNZ(LabelRef("utf8AVX512_multi"))
	VPORQ(prevInc, errs, errs)
	VMOVDQA64(x, prevIn)
	ADDQ(U8(zmmBytes), p)
	SUBQ(U8(zmmBytes), n)
	JMP(LabelRef("utf8AVX512_loop"))

	Label("utf8AVX512_multi")
	v.check(x, prevIn, errs)
	VPSUBUSB(incMax, x, prevInc)
	VMOVDQA64(x, prevIn)
	ADDQ(U8(zmmBytes), p)
	SUBQ(U8(zmmBytes), n)
	JMP(LabelRef("utf8AVX512_loop"))

	Label("utf8AVX512_tail")
	TESTQ(n, n)
	JNZ(LabelRef("utf8AVX512_partial"))
	VPORQ(prevInc, errs, errs)
	JMP(LabelRef("utf8AVX512_done"))

	Label("utf8AVX512_partial")
	// The last 1..63 bytes, zero-padded by a masked load (see the AVX2
	// kernel for why zero padding needs no end-of-input check).
	kt := K()
	tailMaskAVX512(n, kt)
	VMOVDQU8_Z(Mem{Base: p}, kt, x)
	v.check(x, prevIn, errs)

	Label("utf8AVX512_done")
	ok := GP8()
	VPTESTMQ(errs, errs, k)
	KORTESTW(k, k)
	SETEQ(ok)
	Store(ok, ReturnIndex(0))
	VZEROUPPER()
	RET()
}

// ternAnd3 is the vpternlog truth table of a AND b AND c.
const ternAnd3 = 0x80

const dwordBytes = 4

// utf8Consts are the broadcast constants the AVX2 kernel reads from memory.
type utf8Consts struct{ sub3, sub4, high Mem }

func utf8ConstData() utf8Consts {
	bcast := func(name string, b byte) Mem {
		m := GLOBL(name, RODATA|NOPTR)
		for i := 0; i < ymmBytes; i++ {
			DATA(i, U8(b))
		}
		return m
	}
	return utf8Consts{
		sub3: bcast("utf8ThirdByteSub", thirdByteSub),
		sub4: bcast("utf8FourthByteSub", fourthByteSub),
		high: bcast("utf8HighBit", highBit),
	}
}
