package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
)

// Layout of asm.JSONCarry's words and of one block's words
// (asm/jsonindex.go).
const (
	// bitposUnroll is the number of positions written for every block
	// whether or not it has that many structurals.
	bitposUnroll  = 8
	carryEsc      = 0
	carryStr      = 8
	carryScalar   = 16
	jsonClasses   = 5
	clsQuote      = 0
	clsBack       = 8
	clsStop       = 16
	clsSpace      = 24
	clsOp         = 32
	maskStops     = 0
	maskSpecials  = 8
	jsonMaskBytes = 16
)

// jsonStructuralsBMI is JSONStructurals for both SIMD levels: its work is on
// 64-bit masks, in general registers, with pclmulqdq for the prefix xor
// (one carry-less multiplication by all ones instead of six shifts and
// xors) and tzcnt/blsr for the positions: eight of them unconditionally
// (the count varies from block to block, and a loop exit on it would
// mispredict; twitter.json has about six per block), then a loop for the
// rest, as simdjson does. Vector compression of the positions was tried
// and left out: a kernel that turned masks into positions with vpcompressd
// (register form, then a 64-byte store, 16 mask bits at a time) took 1514
// ns per 256 words of six bits against 922 for tzcnt/blsr (AMD EPYC Zen 4,
// Go 1.26, shared machine).
func jsonStructuralsBMI() {
	kernel("jsonStructuralsBMI", "func(pos []uint32, masks []uint64, cls []uint64, base uint32, c *[3]uint64) int")
	Doc("jsonStructuralsBMI is the kernel of JSONStructurals at the AVX2 and AVX-512 levels",
		"(BMI1, POPCNT and CLMUL), with its contract and at least one block.")
	out := Load(Param("pos").Base(), GP64())
	mp := Load(Param("masks").Base(), GP64())
	cp := Load(Param("cls").Base(), GP64())
	n := Load(Param("cls").Len(), GP64())
	base := Load(Param("base"), GP32())
	cr := Load(Param("c"), GP64())
	escC, strC, scalC := GP64(), GP64(), GP64()
	MOVQ(Mem{Base: cr, Disp: carryEsc}, escC)
	MOVQ(Mem{Base: cr, Disp: carryStr}, strC)
	MOVQ(Mem{Base: cr, Disp: carryScalar}, scalC)
	// end: cls's end, the loop bound (len(cls) is a multiple of 5 words).
	end := GP64()
	LEAQ(Mem{Base: cp, Index: n, Scale: 8}, end)
	ones, xq := XMM(), XMM()
	t := GP64()
	MOVQ(I32(-1), t)
	MOVQ(t, ones)

	q, sn, w, inStr, x := GP64(), GP64(), GP64(), GP64(), GP64()
	Label("jsonBMI_loop")
	MOVQ(Mem{Base: cp, Disp: clsQuote}, q)
	MOVQ(Mem{Base: cp, Disp: clsStop}, sn)
	MOVQ(sn, Mem{Base: mp, Disp: maskStops})
	ANDNQ(sn, q, sn) // stops that are not quotes: ^q & stop
	MOVQ(Mem{Base: cp, Disp: clsBack}, x)
	MOVQ(x, w)
	ORQ(escC, w)
	JNZ(LabelRef("jsonBMI_escape"))
	Label("jsonBMI_escaped")

	// inStr = prefix xor of the unescaped quotes, then the carry.
	MOVQ(q, xq)
	PCLMULQDQ(U8(0), ones, xq)
	MOVQ(xq, inStr)
	XORQ(strC, inStr)
	MOVQ(inStr, strC)
	SARQ(U8(63), strC)
	ANDQ(inStr, sn)
	MOVQ(sn, Mem{Base: mp, Disp: maskSpecials})

	// scalar = ^(space | op | quote | inStr)
	MOVQ(Mem{Base: cp, Disp: clsSpace}, w)
	MOVQ(Mem{Base: cp, Disp: clsOp}, x)
	ORQ(x, w)
	ORQ(q, w)
	ORQ(inStr, w)
	NOTQ(w)
	// structural = op &^ inStr | quote & inStr | scalar &^ (scalar<<1 | carry)
	ANDNQ(x, inStr, x) // ^inStr & op
	ANDQ(inStr, q)
	ORQ(q, x)
	LEAQ(Mem{Base: w, Index: w, Scale: 1}, q)
	ORQ(scalC, q)
	ANDNQ(w, q, q) // ^(scalar<<1 | carry) & scalar
	ORQ(q, x)
	MOVQ(w, scalC)
	SHRQ(U8(63), scalC)

	// Positions of x's bits: eight unconditionally, then the rest.
	c := sn
	POPCNTQ(x, c)
	for j := 0; j < bitposUnroll; j++ {
		TZCNTQ(x, t)
		ADDL(base, t.As32())
		MOVL(t.As32(), Mem{Base: out, Disp: 4 * j})
		BLSRQ(x, x)
	}
	CMPQ(c, U8(bitposUnroll))
	JBE(LabelRef("jsonBMI_next"))
	rest := inStr
	LEAQ(Mem{Base: out, Disp: 4 * bitposUnroll}, rest)
	Label("jsonBMI_rest")
	TZCNTQ(x, t)
	ADDL(base, t.As32())
	MOVL(t.As32(), Mem{Base: rest})
	ADDQ(U8(4), rest)
	BLSRQ(x, x)
	JNZ(LabelRef("jsonBMI_rest"))
	Label("jsonBMI_next")
	LEAQ(Mem{Base: out, Index: c, Scale: 4}, out)
	ADDL(U8(64), base)
	ADDQ(U8(8*jsonClasses), cp)
	ADDQ(U8(jsonMaskBytes), mp)
	CMPQ(cp, end)
	JB(LabelRef("jsonBMI_loop"))

	MOVQ(escC, Mem{Base: cr, Disp: carryEsc})
	MOVQ(strC, Mem{Base: cr, Disp: carryStr})
	MOVQ(scalC, Mem{Base: cr, Disp: carryScalar})
	start := Load(Param("pos").Base(), GP64())
	SUBQ(start, out)
	SHRQ(U8(2), out)
	Store(out, ReturnIndex(0))
	RET()

	// The escaped bytes (rare: only blocks with a backslash, or after one
	// that ended a block): w = the carry, x = the backslashes not
	// escaped themselves; each escaping backslash at p sets bit p+1 of
	// w and takes p and p+1 out of x; one at bit 63 escapes the next
	// block's first byte instead. Then the escaped quotes leave q.
	Label("jsonBMI_escape")
	MOVQ(escC, w)
	ANDNQ(x, escC, x) // ^carry & backslashes
	XORL(escC.As32(), escC.As32())
	Label("jsonBMI_escloop")
	TZCNTQ(x, t)
	JCS(LabelRef("jsonBMI_escdone")) // tzcnt sets CF when x is zero
	CMPQ(t, U8(63))
	JEQ(LabelRef("jsonBMI_esclast"))
	BTRQ(t, x)
	INCQ(t)
	BTSQ(t, w)
	BTRQ(t, x)
	JMP(LabelRef("jsonBMI_escloop"))
	Label("jsonBMI_esclast")
	MOVL(U32(1), escC.As32())
	Label("jsonBMI_escdone")
	ANDNQ(q, w, q) // ^escaped & quotes
	JMP(LabelRef("jsonBMI_escaped"))
}
