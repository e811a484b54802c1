package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

const (
	// ymmBytes and zmmBytes are the vector widths of AVX2 and AVX-512.
	ymmBytes = 32
	zmmBytes = 64
	// pageBlock is the smallest page size on amd64. A 32-byte load that
	// stays inside the 4 KiB block holding its first byte touches only
	// mapped memory when that byte is mapped, so read-only kernels may load
	// past the end of a buffer as long as they discard the extra lanes.
	pageBlock = 4096
)

// tailLoadAVX2 loads the r (1..32) bytes at p into y for a read-only AVX2
// kernel without touching memory outside p's 4 KiB block. It sets shift so
// that, for any per-byte bit mask m computed from y, (m >> shift) has bit j
// for byte p[j], and the caller must then clear bits r and above
// (fixMaskAVX2). Lanes of y that do not hold p[0..r) are unspecified.
func tailLoadAVX2(name string, p, r reg.Register, y reg.VecVirtual, shift reg.Register) {
	Comment("Tail: load 32 bytes inside p's 4 KiB block, forwards from p if that fits, else backwards from p+r.")
	off := GP64()
	MOVQ(p, off)
	ANDQ(U32(pageBlock-1), off)
	CMPQ(off, U32(pageBlock-ymmBytes))
	JA(LabelRef(name + "_back"))
	VMOVDQU(Mem{Base: p}, y)
	XORQ(shift, shift)
	JMP(LabelRef(name + "_loaded"))
	Label(name + "_back")
	// p lies in the last 31 bytes of its block, so p+r-32 is in the same
	// block, and p+r-1 is the buffer's last byte.
	VMOVDQU(Mem{Base: p, Index: r, Scale: 1, Disp: -ymmBytes}, y)
	MOVQ(U32(ymmBytes), shift)
	SUBQ(r, shift)
	Label(name + "_loaded")
}

// fixMaskAVX2 aligns a mask computed from a tailLoadAVX2 vector and clears
// the bits of lanes past the r valid bytes.
func fixMaskAVX2(m, shift, r reg.Register) {
	SHRXQ(shift, m, m)
	BZHIQ(r, m, m)
}

// tailMaskAVX512 sets k to the lowest r bits (r in 0..64), for masked loads,
// stores and compares of a tail.
func tailMaskAVX512(r reg.Register, k reg.OpmaskVirtual) {
	ones := GP64()
	MOVQ(I32(-1), ones)
	BZHIQ(r, ones, ones)
	KMOVQ(ones, k)
}

// kernel starts a generated function. Every kernel reads and writes only
// through its arguments and keeps no pointer after it returns, so the stub
// is marked //go:noescape: without it, every slice passed to a kernel would
// escape to the heap (a Classify destination on a caller's stack would be
// allocated per call).
func kernel(name, signature string) {
	TEXT(name, NOSPLIT, signature)
	Pragma("noescape")
}
