package main

import (
	. "github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/ir"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// Layout of asm.JSONCarry's words and of one block's mask words
// (asm/jsonindex.go).
const (
	// bitposUnroll is the number of positions written for every block
	// whether or not it has that many structurals.
	bitposUnroll  = 8
	carryEsc      = 0
	carryStr      = 8
	carryScalar   = 16
	carryPlain    = 24
	maskStops     = 0
	maskPlainEnds = 8
	jsonMaskBytes = 16
)

// The classes the JSON index kernels find in each 64-byte block, each as a
// 64-bit mask (jsonMasks.get).
const (
	jsonQuote   = iota // '"'
	jsonBack           // '\\'
	jsonBackCtl        // '\\' and the bytes below 0x20: a string's specials
	jsonStops          // '"', '\\' and the bytes below 0x20
	jsonSpaceOp        // JSON whitespace and the operators
	jsonOp             // '{', '}', '[', ']', ':', ','
	jsonMaskKinds
)

// JSON byte constants of the classification.
const (
	jsonCtlEnd = 0x20 // the first byte that is not a control byte
	jsonOpFold = 0x20 // or-ed into a byte before the operator lookup
	jsonNoByte = 0x80 // a table entry no byte below 0x80 can equal
)

// jsonLookups returns the two vpshufb tables of the classification, each
// indexed by a byte's low nibble (vpshufb gives zero for bytes with bit 7
// set, which never equals the byte): whitespace holds, at each of the low
// nibbles of ' ', '\t', '\n' and '\r', that byte, so a byte is whitespace
// when its lookup equals it; operators holds ',', ':', '{' and '}' at their
// low nibbles, so a byte is an operator when its lookup equals the byte
// or-ed with 0x20 ('[' and ']' fold onto '{' and '}'). The fold also lets
// 0x0c and 0x1a match; they are control bytes and the kernels take the
// control bytes out of the operators.
func jsonLookups() (space, op Mem) {
	table := func(name string, bytes string) Mem {
		var t [16]byte
		for i := range t {
			t[i] = jsonNoByte
		}
		for _, c := range []byte(bytes) {
			t[c&nibbleMask] = c
		}
		m := GLOBL(name, RODATA|NOPTR)
		for i, v := range t {
			DATA(i, U8(v))
		}
		return m
	}
	return table("jsonSpaceLookup", " \t\n\r"), table("jsonOpLookup", ",:{}")
}

// jsonMasks gives the class masks of the block being indexed: get puts
// mask k (jsonQuote...) in dst, using t as scratch.
type jsonMasks struct {
	get func(k int, dst, t reg.GPVirtual)
	// positions, if set, writes the positions of x's c bits to k.out
	// instead of tzcnt/blsr; it may jump to <name>_next.
	positions func(name string, k *jsonIndexRegs, x, c reg.GPVirtual)
	// stopsInGP makes the block take the stops as quotes | jsonBackCtl in
	// a general register instead of get(jsonStops), and jsonBackCtl for
	// the plain ends back from the mask slot it stored it in: for AVX2,
	// where each get costs two vpmovmskb, a shift and an or.
	stopsInGP bool
	// anyBack, if set, jumps to its label when the block has a backslash,
	// so that the backslash mask is taken to a general register only then
	// (in the escape step): for AVX2, a vptest instead of a get.
	anyBack func(label string)
}

// jsonIndexAVX512 and jsonIndexAVX2 are JSONIndex's kernels: each
// classifies a 64-byte block with vector compares and lookups and, in the
// same loop iteration, turns the masks into positions (jsonIndexBlock), so
// the masks go from vector (or opmask) registers to general registers
// without a pass of their own over the input and without a store and load
// of every mask word, which the two-pass first stage (Classify, then a
// kernel over its words) paid.
func jsonIndexAVX512(space, op Mem, vbmi2 bool) {
	name := "jsonIndexAVX512"
	if vbmi2 {
		name = "jsonIndexVBMI2"
		kernel(name, jsonIndexSig)
		Doc(name+" is jsonIndexAVX512 with the positions written by vpcompressb",
			"(AVX512_VBMI2), with its contract.")
	} else {
		kernel(name, jsonIndexSig)
		Doc(name+" is the AVX-512 kernel of JSONIndex, with its contract, for whole",
			"64-byte blocks (len(src) a multiple of 64, at least one block).")
	}
	k := jsonIndexSetup()
	bq, bb, bctl, bfold, tsp, top := ZMM(), ZMM(), ZMM(), ZMM(), ZMM(), ZMM()
	broadcastByte('"', bq)
	broadcastByte('\\', bb)
	broadcastByte(jsonCtlEnd, bctl)
	broadcastByte(jsonOpFold, bfold)
	VBROADCASTI32X4(space, tsp)
	VBROADCASTI32X4(op, top)
	var m [jsonMaskKinds]reg.OpmaskVirtual
	for i := range m {
		m[i] = K()
	}
	var positions func(string, *jsonIndexRegs, reg.GPVirtual, reg.GPVirtual)
	if vbmi2 {
		positions = compressPositions()
	}
	Label(name + "_loop")
	x, t, f := ZMM(), ZMM(), ZMM()
	VMOVDQU64(Mem{Base: k.p}, x)
	VPCMPEQB(bq, x, m[jsonQuote])
	VPCMPEQB(bb, x, m[jsonBack])
	VPCMPUB(U8(1), bctl, x, m[jsonBackCtl]) // predicate 1: less than
	VPSHUFB(x, tsp, t)
	VPCMPEQB(t, x, m[jsonSpaceOp])
	// The operators, among the bytes that are not control bytes.
	KNOTQ(m[jsonBackCtl], m[jsonOp])
	VPORQ(bfold, x, f)
	VPSHUFB(x, top, t)
	VPCMPEQB(t, f, m[jsonOp], m[jsonOp])
	KORQ(m[jsonSpaceOp], m[jsonOp], m[jsonSpaceOp])
	KORQ(m[jsonBackCtl], m[jsonBack], m[jsonBackCtl])
	KORQ(m[jsonBackCtl], m[jsonQuote], m[jsonStops])
	masks := jsonMasks{get: func(i int, dst, _ reg.GPVirtual) { KMOVQ(m[i], dst) }, positions: positions}
	jsonIndexBlock(name, k, masks)
	VZEROUPPER()
	RET()
	jsonIndexEscape(name, k, masks)
}

func jsonIndexAVX2(space, op Mem) {
	kernel("jsonIndexAVX2", jsonIndexSig)
	Doc("jsonIndexAVX2 is the AVX2 kernel of JSONIndex, with the contract of jsonIndexAVX512.")
	k := jsonIndexSetup()
	// The byte constants are memory operands: with them in registers, the
	// masks kept for the block's step would need more than AVX2's 16.
	bytes := func(name string, b byte) Mem {
		m := GLOBL(name, RODATA|NOPTR)
		for i := 0; i < ymmBytes; i++ {
			DATA(i, U8(b))
		}
		return m
	}
	bq, bb := bytes("jsonQuoteBytes", '"'), bytes("jsonBackBytes", '\\')
	bctl := bytes("jsonLastCtlBytes", jsonCtlEnd-1) // for vpminub
	bfold := bytes("jsonOpFoldBytes", jsonOpFold)
	tsp, top := YMM(), YMM()
	VBROADCASTI128(space, tsp)
	VBROADCASTI128(op, top)
	// v[i][h] is class i's byte mask of half h (bytes 32h..32h+31), kept
	// in vector registers until the block's step needs it; quotes,
	// backslashes and stops are taken to general registers at once.
	var v [jsonMaskKinds][2]reg.VecVirtual
	Label("jsonIndexAVX2_loop")
	for h := 0; h < 2; h++ {
		x, t, f := YMM(), YMM(), YMM()
		VMOVDQU(Mem{Base: k.p, Disp: ymmBytes * h}, x)
		for i := range v {
			if i != jsonStops {
				v[i][h] = YMM()
			}
		}
		VPCMPEQB(bq, x, v[jsonQuote][h])
		VPCMPEQB(bb, x, v[jsonBack][h])
		VPMINUB(bctl, x, t)
		VPCMPEQB(t, x, t) // control bytes: min(x, 0x1f) == x
		VPSHUFB(x, tsp, v[jsonSpaceOp][h])
		VPCMPEQB(v[jsonSpaceOp][h], x, v[jsonSpaceOp][h])
		VPOR(bfold, x, f)
		VPSHUFB(x, top, v[jsonOp][h])
		VPCMPEQB(v[jsonOp][h], f, v[jsonOp][h])
		VPANDN(v[jsonOp][h], t, v[jsonOp][h]) // without the control bytes
		VPOR(v[jsonOp][h], v[jsonSpaceOp][h], v[jsonSpaceOp][h])
		VPOR(v[jsonBack][h], t, v[jsonBackCtl][h])
	}
	get := func(i int, dst, t reg.GPVirtual) {
		VPMOVMSKB(v[i][0], dst.As32())
		VPMOVMSKB(v[i][1], t.As32())
		SHLQ(U8(ymmBytes), t)
		ORQ(t, dst)
	}
	anyBack := func(label string) {
		t := YMM()
		VPOR(v[jsonBack][0], v[jsonBack][1], t)
		VPTEST(t, t)
		JNZ(LabelRef(label))
	}
	masks := jsonMasks{get: get, stopsInGP: true, anyBack: anyBack}
	jsonIndexBlock("jsonIndexAVX2", k, masks)
	VZEROUPPER()
	RET()
	jsonIndexEscape("jsonIndexAVX2", k, masks)
}

const jsonIndexSig = "func(pos []uint32, masks []uint64, src []byte, base uint32, c *[4]uint64) int"

// jsonIndexRegs are the registers of a JSON index kernel.
type jsonIndexRegs struct {
	out, mp, p, end, base reg.GPVirtual // positions, masks, input, its end, offset of p
	escC, strC, scalC     reg.GPVirtual // JSONCarry's first three words
	plainC                reg.GPVirtual // and its fourth
	q, x, w, inStr, t     reg.GPVirtual // the block's work
	ones, xq              reg.VecVirtual
}

func jsonIndexSetup() *jsonIndexRegs {
	k := &jsonIndexRegs{}
	k.out, k.mp, k.p, k.base = GP64(), GP64(), GP64(), GP32()
	Load(Param("pos").Base(), k.out)
	Load(Param("masks").Base(), k.mp)
	Load(Param("src").Base(), k.p)
	n := Load(Param("src").Len(), GP64())
	Load(Param("base"), k.base)
	cr := Load(Param("c"), GP64())
	k.escC, k.strC, k.scalC = GP64(), GP64(), GP64()
	MOVQ(Mem{Base: cr, Disp: carryEsc}, k.escC)
	MOVQ(Mem{Base: cr, Disp: carryStr}, k.strC)
	MOVQ(Mem{Base: cr, Disp: carryScalar}, k.scalC)
	k.plainC = GP64()
	MOVQ(Mem{Base: cr, Disp: carryPlain}, k.plainC)
	k.end = GP64()
	LEAQ(Mem{Base: k.p, Index: n, Scale: 1}, k.end)
	k.ones, k.xq = XMM(), XMM()
	k.t = GP64()
	MOVQ(I32(-1), k.t)
	MOVQ(k.t, k.ones)
	k.q, k.x, k.w, k.inStr = GP64(), GP64(), GP64(), GP64()
	return k
}

// jsonIndexBlock emits the work on one block's masks, from the
// label <name>_escaped after the escape check to the loop's end, and the
// epilogue that stores the carry and returns the count (but not RET). It
// works in general registers, with pclmulqdq for the prefix xor (one
// carry-less multiplication by all ones instead of six shifts and xors)
// and tzcnt/blsr for the positions: eight of them unconditionally (the
// count varies from block to block, and a loop exit on it would
// mispredict; twitter.json has 5.6 per block), then a loop for the rest.
// A second unconditional eight for blocks with more than eight (18 % of
// twitter.json's), as simdjson writes them, measured 8 % slower here
// (index stage, AMD EPYC Zen 4, both levels, shared machine). Where the CPU
// has AVX512_VBMI2, the AVX-512 kernel writes them with vpcompressb
// instead (compressPositions): one compression per block (every block of
// twitter.json has at most 16 positions), where a dword version
// (vpcompressd, four per block, tried before) had lost to tzcnt/blsr, 1514
// against 922 ns per 256 words; the byte version cut the index stage of
// twitter.json by 36 % (8 interleaved rounds, Zen 4, Go 1.26, CPU time,
// shared machine).
func jsonIndexBlock(name string, k *jsonIndexRegs, m jsonMasks) {
	q, x, w, inStr, t := k.q, k.x, k.w, k.inStr, k.t
	if m.stopsInGP {
		m.get(jsonBackCtl, w, t)
		MOVQ(w, Mem{Base: k.mp, Disp: maskPlainEnds})
		m.get(jsonQuote, q, t)
		ORQ(q, w)
	} else {
		m.get(jsonStops, w, t)
		m.get(jsonQuote, q, t)
	}
	MOVQ(w, Mem{Base: k.mp, Disp: maskStops})
	if m.anyBack != nil {
		m.anyBack(name + "_getback")
		TESTQ(k.escC, k.escC)
		JNZ(LabelRef(name + "_getback"))
	} else {
		m.get(jsonBack, x, t)
		MOVQ(x, w)
		ORQ(k.escC, w)
		JNZ(LabelRef(name + "_escape"))
	}
	Label(name + "_escaped")

	// inStr = prefix xor of the unescaped quotes, then the carry.
	MOVQ(q, k.xq)
	PCLMULQDQ(U8(0), k.ones, k.xq)
	MOVQ(k.xq, inStr)
	XORQ(k.strC, inStr)
	MOVQ(inStr, k.strC)
	SARQ(U8(63), k.strC)

	// The plain ends: adding each string's opening quote (or the carry,
	// for a string that goes on from the block before) to the inside of
	// the strings without their specials carries up to the closing quote
	// only through a run with no special.
	if m.stopsInGP {
		MOVQ(Mem{Base: k.mp, Disp: maskPlainEnds}, w)
	} else {
		m.get(jsonBackCtl, w, t)
	}
	ANDNQ(inStr, w, w) // ^specials & inStr
	MOVQ(q, x)
	ANDQ(inStr, x) // opening quotes
	ORQ(k.plainC, x)
	XORL(k.plainC.As32(), k.plainC.As32())
	ADDQ(x, w)
	ADCQ(U8(0), k.plainC)
	ANDQ(q, w)
	ANDNQ(w, inStr, w) // closing quotes reached
	MOVQ(w, Mem{Base: k.mp, Disp: maskPlainEnds})

	// scalar = ^(space | op | quote | inStr)
	m.get(jsonSpaceOp, w, t)
	ORQ(q, w)
	ORQ(inStr, w)
	NOTQ(w)
	// structural = op &^ inStr | quote & inStr | scalar &^ (scalar<<1 | carry)
	m.get(jsonOp, x, t)
	ANDNQ(x, inStr, x) // ^inStr & op
	ANDQ(inStr, q)
	ORQ(q, x)
	LEAQ(Mem{Base: w, Index: w, Scale: 1}, q)
	ORQ(k.scalC, q)
	ANDNQ(w, q, q) // ^(scalar<<1 | carry) & scalar
	ORQ(q, x)
	MOVQ(w, k.scalC)
	SHRQ(U8(63), k.scalC)

	// Positions of x's bits: eight unconditionally, then the rest.
	c := w
	POPCNTQ(x, c)
	if m.positions != nil {
		m.positions(name, k, x, c)
	} else {
		for j := 0; j < bitposUnroll; j++ {
			TZCNTQ(x, t)
			ADDL(k.base, t.As32())
			MOVL(t.As32(), Mem{Base: k.out, Disp: 4 * j})
			BLSRQ(x, x)
		}
		CMPQ(c, U8(bitposUnroll))
		JBE(LabelRef(name + "_next"))
		rest := inStr
		LEAQ(Mem{Base: k.out, Disp: 4 * bitposUnroll}, rest)
		Label(name + "_rest")
		TZCNTQ(x, t)
		ADDL(k.base, t.As32())
		MOVL(t.As32(), Mem{Base: rest})
		ADDQ(U8(4), rest)
		BLSRQ(x, x)
		JNZ(LabelRef(name + "_rest"))
	}
	Label(name + "_next")
	LEAQ(Mem{Base: k.out, Index: c, Scale: 4}, k.out)
	ADDL(U8(zmmBytes), k.base)
	ADDQ(U8(zmmBytes), k.p)
	ADDQ(U8(jsonMaskBytes), k.mp)
	CMPQ(k.p, k.end)
	JB(LabelRef(name + "_loop"))

	cr := Load(Param("c"), GP64())
	MOVQ(k.escC, Mem{Base: cr, Disp: carryEsc})
	MOVQ(k.strC, Mem{Base: cr, Disp: carryStr})
	MOVQ(k.scalC, Mem{Base: cr, Disp: carryScalar})
	MOVQ(k.plainC, Mem{Base: cr, Disp: carryPlain})
	start := Load(Param("pos").Base(), GP64())
	SUBQ(start, k.out)
	SHRQ(U8(2), k.out)
	Store(k.out, ReturnIndex(0))
}

// jsonIndexEscape emits the out-of-line escape step of jsonIndexBlock
// (rare: only blocks with a backslash, or after one that ended a block):
// w = the carry, x = the backslashes not escaped themselves; each escaping
// backslash at p sets bit p+1 of w and takes p and p+1 out of x; one at
// bit 63 escapes the next block's first byte instead. Then the escaped
// quotes leave q.
func jsonIndexEscape(name string, k *jsonIndexRegs, m jsonMasks) {
	q, x, w, t, escC := k.q, k.x, k.w, k.t, k.escC
	if m.anyBack != nil {
		Label(name + "_getback")
		m.get(jsonBack, x, t)
	}
	Label(name + "_escape")
	MOVQ(escC, w)
	ANDNQ(x, escC, x) // ^carry & backslashes
	XORL(escC.As32(), escC.As32())
	Label(name + "_escloop")
	TZCNTQ(x, t)
	JCS(LabelRef(name + "_escdone")) // tzcnt sets CF when x is zero
	CMPQ(t, U8(63))
	JEQ(LabelRef(name + "_esclast"))
	BTRQ(t, x)
	INCQ(t)
	BTSQ(t, w)
	BTRQ(t, x)
	JMP(LabelRef(name + "_escloop"))
	Label(name + "_esclast")
	MOVL(U32(1), escC.As32())
	Label(name + "_escdone")
	ANDNQ(q, w, q) // ^escaped & quotes
	JMP(LabelRef(name + "_escaped"))
}

// compressPositions sets up and returns the positions step of
// jsonIndexVBMI2: vpcompressb packs the byte offsets 0..63 of x's bits
// into the low bytes of a vector, and each 16 of them are widened to 32
// bits, added to the block's base and stored, 16 positions with four
// instructions where tzcnt/blsr take 32 for 8.
func compressPositions() func(string, *jsonIndexRegs, reg.GPVirtual, reg.GPVirtual) {
	offsets := GLOBL("jsonByteOffsets", RODATA|NOPTR)
	for i := 0; i < zmmBytes; i++ {
		DATA(i, U8(i))
	}
	idx := ZMM()
	VMOVDQU64(offsets, idx)
	kx, packed, wide, base, part := K(), ZMM(), ZMM(), ZMM(), XMM()
	return func(name string, k *jsonIndexRegs, x, c reg.GPVirtual) {
		KMOVQ(x, kx)
		Instruction(&ir.Instruction{
			Opcode: "VPCOMPRESSB", Suffixes: []string{"Z"},
			Operands: []Op{idx, kx, packed}, Inputs: []Op{idx, kx}, Outputs: []Op{packed},
			ISA: []string{"AVX512VBMI2"},
		})
		VPBROADCASTD(k.base, base)
		for q := 0; q < zmmBytes/16; q++ {
			if q == 0 {
				VPMOVZXBD(packed.AsX(), wide)
			} else {
				CMPQ(c, U8(16*q))
				JBE(LabelRef(name + "_next"))
				VEXTRACTI32X4(U8(q), packed, part)
				VPMOVZXBD(part, wide)
			}
			VPADDD(base, wide, wide)
			VMOVDQU32(wide, Mem{Base: k.out, Disp: 64 * q})
		}
	}
}
