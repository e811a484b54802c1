package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// The windowed scan. With S the inclusive prefix sums (carry included) and
// W the sum of the N inputs up to and including element i (N the elements
// per vector), S[i] = W[i] + S[i-N]: each element of an output vector is
// the window sum at its place plus the same element of the previous output
// vector. That needs no broadcast of a running carry and no fix-up across
// 128-bit lanes, and the loop-carried dependency is one add.
//
// W is built by doubling, W_2s[i] = W_s[i] + W_s[i-s]. The first step reads
// the input one element back straight from memory (an unaligned load folded
// into the add; no shuffle and no mask, since the element that comes in
// from the previous vector is exactly what a window sum wants). The later
// steps shift W_s in registers, the elements coming in at the bottom taken
// from the previous vector's W_s, which the loop keeps: one vperm2i128 for a
// whole 128-bit lane, vperm2i128 + vpalignr for less.
//
// For 32-bit lanes that is seven vector operations per 8 elements (two of
// them shuffles across lanes, one in-lane) against the in-lane scan's
// thirteen; windowStep32 rearranges the sums so that only one of the seven
// crosses lanes. That measured the same here (Zen 5 has two shuffle pipes:
// 83-89 against 85-95 ns, 4 rounds each, machine busy); it is kept because
// on cores with one shuffle port (Intel's port 5) the shuffles, three
// against two per vector, would be the limit. Measured on AMD EPYC family 26 (Zen 5, virtualised), CPU time
// at 4 KiB, minimum of 5-7 rounds on a busy machine: PrefixSum32 AVX2 121 ->
// 88 ns (3.5x the scalar twin's 317 ns), AVX-512 101 -> 58 ns; PrefixSum16
// AVX2 164 -> 129 ns. Variants that measured no better:
//   - W_4 from four loads (x, x[-1], x[-2], x[-3]; no shuffle at all):
//     106 ns; the loads, half of them crossing a cache line, become the
//     limit;
//   - the span-2 step as a vpermd rotation plus a vpblendd with the
//     previous vector's rotation instead of vperm2i128 + vpalignr: equal;
//   - two vectors summed before the chain add (one chain add per two
//     vectors): equal, the loop is bound by throughput, not the chain.
// A chain-only loop (load, one add, store) measures ~1 cycle per vector, so
// the remaining cost is the seven operations on four vector pipes.
//
// The loads read src one and two elements before the vector, so the
// windowed loop runs from the second vector on (the first takes the in-lane
// scan, and seeds the carried state) and only when dst is not src: in place
// those elements are already overwritten with sums.
//
// 4K aliasing: with dst and src both 4 KiB-aligned (as in the benchmark),
// loads that reach back into addresses whose low 12 bits match a recent
// store stall. The four-load variant measured 148 ns so and 106 ns with dst
// moved by 512 bytes; this form, reaching one element back, measures the
// same either way.

// windowMinVectors is the fewest vectors left after the first for which a
// call takes the windowed loop. Seeding its state and the broadcast of the
// carry at the end cost more than they save on short inputs: with the
// windowed loop from the second vector on, 64- and 256-byte calls measured
// 15-38 % slower than the in-lane scan (8- and 16-bit lanes, and AVX-512 at
// 256 bytes), benchstat -count 10, while 4 KiB calls were 12-43 % faster.
const windowMinVectors = 8

// winVec is a vector width as the windowed loop sees it, so that one loop
// (windowLoop) and one step (windowStep) serve AVX2 and AVX-512.
type winVec struct {
	bytes int
	alloc func() reg.VecVirtual
	// move copies a register; load and store move whole vectors.
	move, load, store func(src, dst Op)
	// shiftIn returns cur moved up by s elements of l, with the top s
	// elements of prev coming in at the bottom.
	shiftIn func(l *lane, prev, cur reg.VecVirtual, s int) reg.VecVirtual
	// loads is how many shifted input copies are summed from memory (2 or
	// 4): steps below what shiftIn can do come from loads.
	loads func(l *lane) int
	// lanes32 marks AVX2, whose 32-bit lanes take windowStep32.
	lanes32 bool
}

var (
	// ymmWin shifts with vperm2i128 (a whole 128-bit lane) or vperm2i128 +
	// vpalignr (less than a lane).
	ymmWin = &winVec{bytes: ymmBytes, alloc: YMM, move: VMOVDQA, load: VMOVDQU, store: VMOVDQU,
		loads: func(*lane) int { return 2 }, lanes32: true,
		shiftIn: func(l *lane, prev, cur reg.VecVirtual, s int) reg.VecVirtual {
			t := YMM()
			VPERM2I128(U8(0x21), cur, prev, t) // lane 0 = prev's lane 1, lane 1 = cur's lane 0
			if b := s * l.bytes(); b < laneBytes {
				VPALIGNR(U8(laneBytes-b), t, cur, t)
			}
			return t
		}}
	// zmmWin shifts with one valignd, which moves whole dwords across the
	// whole vector; steps below a dword (8-bit lanes at span 2) read the
	// input from memory instead: W_4 = (x + x[-1]) + (x[-2] + x[-3]).
	zmmWin = &winVec{bytes: zmmBytes, alloc: ZMM, move: func(a, b Op) { VMOVDQA64(a, b) }, load: func(a, b Op) { VMOVDQU64(a, b) }, store: func(a, b Op) { VMOVDQU64(a, b) },
		loads: func(l *lane) int {
			if l.bits == 8 {
				return 4
			}
			return 2
		},
		shiftIn: func(l *lane, prev, cur reg.VecVirtual, s int) reg.VecVirtual {
			t := ZMM()
			VALIGND(U8(zmmBytes/4-s*l.bytes()/4), prev, cur, t)
			return t
		}}
)

// windowState is what the windowed loop carries from one vector to the
// next: the previous output vector and, for each doubling step done in
// registers, the previous vector's W at that span.
type windowState struct {
	out  reg.VecVirtual
	prev map[int]reg.VecVirtual // span (elements) -> W at that span
}

// spans are the spans (in elements) of the register steps of l, the W_s the
// loop carries. AVX2's 32-bit lanes carry only W_2 (windowStep32).
func (v *winVec) spans(l *lane) []int {
	if v.lanes32 && l.bits == 32 {
		return []int{2}
	}
	var spans []int
	for s := v.loads(l); s < v.bytes/l.bytes(); s *= 2 {
		spans = append(spans, s)
	}
	return spans
}

func (v *winVec) newState(l *lane) windowState {
	st := windowState{out: v.alloc(), prev: map[int]reg.VecVirtual{}}
	for _, s := range v.spans(l) {
		st.prev[s] = v.alloc()
	}
	return st
}

// seed fills st from the first output vector out0 (the scan of the first
// vector, carry included). A register step at span s needs the previous
// vector's W_s only in its top s elements, and there
// W_s[i] = out0[i] - out0[i-s] (all inside the first vector).
func (v *winVec) seed(l *lane, st windowState, out0 reg.VecVirtual) {
	v.move(out0, st.out)
	for _, s := range v.spans(l) {
		t := v.shiftIn(l, out0, out0, s)
		l.sub(t, out0, st.prev[s])
	}
}

// step scans the vector at byte offset off of p into dst, reading from
// back, the element offset of the input (0 inclusive, 1 exclusive: the
// exclusive scan is the inclusive scan of the input one element back). It
// reads the carried state from in and leaves this vector's in out; each W_s
// is computed straight into out's register for span s, so the next vector
// finds it there with no move.
func (v *winVec) step(l *lane, p, dst reg.Register, off, back int, in, out windowState) {
	w := l.bytes()
	spans := v.spans(l)
	x, win := v.alloc(), out.prev[spans[0]]
	v.load(Mem{Base: p, Disp: off - back*w}, x)
	if v.loads(l) == 4 {
		y := v.alloc()
		v.load(Mem{Base: p, Disp: off - (back+2)*w}, y)
		l.add(Mem{Base: p, Disp: off - (back+1)*w}, x, x)
		l.add(Mem{Base: p, Disp: off - (back+3)*w}, y, y)
		l.add(y, x, win)
	} else {
		// W_2 = x + x one element back, the second operand from memory.
		l.add(Mem{Base: p, Disp: off - (back+1)*w}, x, win)
	}
	if v.lanes32 && l.bits == 32 {
		windowStep32(l, dst, off, win, in, out)
		return
	}
	for i, s := range spans {
		next := v.alloc()
		if i+1 < len(spans) {
			next = out.prev[spans[i+1]]
		}
		t := v.shiftIn(l, in.prev[s], win, s)
		l.add(t, win, next)
		win = next
	}
	l.add(in.out, win, out.out)
	v.store(out.out, Mem{Base: dst, Disp: off})
}

// windowStep32 finishes a 32-bit AVX2 vector from W_2 (w2, already in out's
// register) with one shuffle across lanes instead of the doubling steps'
// two. W_8[i] = W_2[i] + W_2[i-2] + W_2[i-4] + W_2[i-6]. With T = W_2 moved
// up one lane (vperm2i128 of the previous and this W_2) and U = W_2 + T,
// W_8 = U + U[i-2]. U[i-2] is one vpalignr of U and U moved up one lane,
// and U moved up one lane is T + (W_2 moved up two lanes) = T + the
// previous vector's W_2: an add instead of a second vperm2i128. So a
// vector costs seven vector operations, one of them a shuffle across
// lanes (the doubling steps: seven, two across lanes).
func windowStep32(l *lane, dst reg.Register, off int, w2 reg.VecVirtual, in, out windowState) {
	t, u, v := YMM(), YMM(), YMM()
	VPERM2I128(U8(0x21), w2, in.prev[2], t) // lane 0 = previous W_2's lane 1, lane 1 = W_2's lane 0
	l.add(t, w2, u)
	l.add(t, in.prev[2], v)
	VPALIGNR(U8(8), v, u, v) // U two elements up: from V in each lane's low half
	l.add(v, u, u)
	l.add(in.out, u, out.out)
	VMOVDQU(out.out, Mem{Base: dst, Disp: off})
}

// windowLoop emits the windowed loop of a kernel named name after its first
// vector (out0, already stored; p, dst and n advanced past it): to the
// in-lane loop at inLane when dst is src or fewer than windowMinVectors
// vectors are left, else two vectors per iteration with the carried state
// alternating between a and b, at most one more, and the carry c for what
// follows (the last sum written plus, for the exclusive form, the last
// input element), then a jump to next.
func (v *winVec) loop(l *lane, name string, excl bool, p, dst, n reg.Register, c, out0 reg.VecVirtual, advance func(int), inLane, next string) {
	CMPQ(dst, p)
	JE(LabelRef(inLane))
	// Seeding the state costs about what the in-lane scan of a few vectors
	// does, so short inputs stay on that scan.
	CMPQ(n, cmpImm(windowMinVectors*v.bytes))
	JB(LabelRef(inLane))
	back := 0
	if excl {
		back = 1
	}
	a, b := v.newState(l), v.newState(l)
	v.seed(l, b, out0)
	Label(name + "_window_loop2")
	CMPQ(n, cmpImm(2*v.bytes))
	JB(LabelRef(name + "_window_one"))
	v.step(l, p, dst, 0, back, b, a)
	v.step(l, p, dst, v.bytes, back, a, b)
	advance(2 * v.bytes)
	JMP(LabelRef(name + "_window_loop2"))
	Label(name + "_window_one")
	CMPQ(n, cmpImm(v.bytes))
	JB(LabelRef(name + "_window_end"))
	v.step(l, p, dst, 0, back, b, a)
	advance(v.bytes)
	Label(name + "_window_end")
	// The broadcast reads the last sum back from dst (store forwarding),
	// simpler than tracking which of a and b holds it.
	w := l.bytes()
	l.bcast(Mem{Base: dst, Disp: -w}, c)
	if excl {
		t := v.alloc()
		l.bcast(Mem{Base: p, Disp: -w}, t)
		l.add(t, c, c)
	}
	JMP(LabelRef(next))
}

// cmpImm is n as the shortest immediate CMPQ takes (a sign-extended byte
// below 128).
func cmpImm(n int) Op {
	if n < 128 {
		return U8(n)
	}
	return U32(n)
}
