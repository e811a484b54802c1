package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
)

const (
	bitposSig = "func(dst []uint32, masks []uint64, base uint32) int"
	// bitposUnroll is the number of positions the AVX2 kernel writes for
	// every mask word whether or not it has that many bits.
	bitposUnroll = 8
)

// bitPositionsBMI turns each mask word into positions with tzcnt and blsr,
// eight of them unconditionally (the count varies from word to word, and a
// loop exit on it would mispredict), then a loop for the rest. It is the
// kernel of both SIMD levels: an AVX-512 version that compressed a vector
// of 16 positions per 16 mask bits (vpcompressd, register form, then a
// 64-byte store) took 1514 ns per 256 words of six bits against this one's
// 922 (BenchmarkBitPositions, AMD EPYC Zen 4, Go 1.26, shared machine).
func bitPositionsBMI() {
	kernel("bitPositionsBMI", bitposSig)
	Doc("bitPositionsBMI is the kernel of BitPositions at the AVX2 and AVX-512 levels",
		"(BMI1 and POPCNT): len(dst) >= 64*len(masks); it writes positions past the",
		"count it returns.")
	out := Load(Param("dst").Base(), GP64())
	m := Load(Param("masks").Base(), GP64())
	n := Load(Param("masks").Len(), GP64())
	base := Load(Param("base"), GP32())
	start := GP64()
	MOVQ(out, start)
	w, c, t := GP64(), GP64(), GP32()

	Label("bitposBMI_loop")
	TESTQ(n, n)
	JZ(LabelRef("bitposBMI_done"))
	MOVQ(Mem{Base: m}, w)
	POPCNTQ(w, c)
	for j := 0; j < bitposUnroll; j++ {
		TZCNTQ(w, t.As64())
		ADDL(base, t)
		MOVL(t, Mem{Base: out, Disp: 4 * j})
		BLSRQ(w, w)
	}
	CMPQ(c, U8(bitposUnroll))
	JBE(LabelRef("bitposBMI_next"))
	rest := GP64()
	LEAQ(Mem{Base: out, Disp: 4 * bitposUnroll}, rest)
	Label("bitposBMI_rest")
	TZCNTQ(w, t.As64())
	ADDL(base, t)
	MOVL(t, Mem{Base: rest})
	ADDQ(U8(4), rest)
	BLSRQ(w, w)
	JNZ(LabelRef("bitposBMI_rest"))
	Label("bitposBMI_next")
	LEAQ(Mem{Base: out, Index: c, Scale: 4}, out)
	ADDL(U8(64), base)
	ADDQ(U8(8), m)
	DECQ(n)
	JMP(LabelRef("bitposBMI_loop"))

	Label("bitposBMI_done")
	SUBQ(start, out)
	SHRQ(U8(2), out)
	Store(out, ReturnIndex(0))
	RET()
}
