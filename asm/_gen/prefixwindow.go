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
// thirteen; window32 rearranges the sums so that only one of the seven
// crosses lanes. That measured the same here (Zen 5 has two shuffle pipes);
// it is kept because on cores with one shuffle port (Intel's port 5) the
// shuffles, three against two per vector, would be the limit.
//
// What bounds the loop, measured on AMD EPYC family 26 (Zen 5, virtualised,
// ~3.5 GHz, no performance counters: CPU time of loops of known length):
//   - a vector integer add has two cycles of latency (a chain of vpaddd
//     runs at 2.0 cycles per add, xmm, ymm and zmm alike) and four pipes
//     (twelve independent adds: 3 cycles); shuffles have two pipes;
//   - 32-byte loads issue two per cycle, and a load crossing a cache line
//     (half of the loads one element back) costs more;
//   - so the 32-bit AVX2 loop sits at ~2 cycles per vector whichever limit
//     is looked at: seven operations on four pipes (1.75), two loads and a
//     store (an isolated load + unaligned load + store loop: 1.3 cycles
//     without aliasing), the chain add (2). Taking away any one of them
//     alone moved little; taking the chain add away together with an
//     operation (six operations, no chain) gave 1.6 cycles.
// Variants that measured no better:
//   - W_4 from four loads (x, x[-1], x[-2], x[-3]; no shuffle at all):
//     106 against 88 ns; the loads become the limit;
//   - the span-2 step as a vpermd rotation plus a vpblendd with the
//     previous vector's rotation instead of vperm2i128 + vpalignr: equal;
//   - pairs of vectors with one chain add per pair (the second output is
//     the first's input plus both window sums): 91-95 against 85 ns, the
//     extra add costs more than the shorter chain saves;
//   - eight vectors per iteration instead of four: equal;
//   - a first block whose chain starts from zero, out0 added aside, so
//     that the chain need not wait for the first vector's in-lane scan:
//     equal (80.4 against 79.3 ns); an isolated loop of the same seven
//     operations with the chain add made independent ran 68 against 71 ns,
//     so the chain costs ~4 %. What did pay was taking the first vector's
//     in-lane scan and its five constants off the windowed path
//     (loopFromStart, AVX2): 79.8 -> 75.4 ns, exclusive 80.1 -> 77.3 ns;
//   - W from a second pass over dst (store W_4, reload it one element
//     back): 120 ns, the memory operations double.
//
// The loads read src one and two elements before the vector, so they may
// not serve the first vector, and the windowed loop runs only when dst is
// not src (in place those elements are already overwritten with sums).
// AVX2 builds the first vector's shifted input in registers (loopFromStart);
// AVX-512, whose valignd moves whole dwords only, takes the in-lane scan for
// the first vector and seeds the carried state from it (loop).
//
// 4K aliasing: with dst and src both 4 KiB-aligned (page-sized buffers, as
// in the benchmark), the load one element back shares the low 12 address
// bits of the previous vector's store, and waits for it. Loading windowAhead
// vectors ahead of the stores avoids that: PrefixSum32 AVX2 84 -> 80 ns,
// ExclusivePrefixSum32 AVX2 92 -> 81 ns (it loads two elements back),
// PrefixSum8 AVX-512 112 -> 80 ns (four loads per vector), minimum of six
// interleaved rounds. An isolated load + unaligned load + store loop ran
// 61 ns with dst 4 KiB-aligned to src and 46 ns with them 1 KiB apart.

// windowMinVectors is the fewest vectors left after the first for which a
// call takes the windowed loop. Seeding its state and the broadcast of the
// carry at the end cost more than they save on short inputs: with the
// windowed loop from the second vector on, 64- and 256-byte calls measured
// 15-38 % slower than the in-lane scan (8- and 16-bit lanes, and AVX-512 at
// 256 bytes), benchstat -count 10, while 4 KiB calls were 12-43 % faster.
const windowMinVectors = 8

// windowAhead is how many vectors ahead of its stores the windowed loop
// loads. Its first load reaches one element before the vector; with dst
// and src both 4 KiB-aligned (page-sized buffers, as in the benchmark) that
// load shares the low 12 address bits of the previous vector's store, and
// a load issued after a store whose low 12 bits overlap waits for it (4K
// aliasing). Loading two vectors ahead puts every such load before the
// store it would alias.
const windowAhead = 2

// windowUnroll is how many vectors an iteration of the windowed loop scans
// (a multiple of 4: the loaded window sums take four registers in turn, and
// the other carried state two).
const windowUnroll = 4

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
	// zero clears a register.
	zero func(r reg.VecVirtual)
	// lanes32 marks AVX2, whose 32-bit lanes take window32.
	lanes32 bool
}

var (
	// ymmWin shifts with vperm2i128 (a whole 128-bit lane) or vperm2i128 +
	// vpalignr (less than a lane).
	ymmWin = &winVec{bytes: ymmBytes, alloc: YMM, move: VMOVDQA, load: VMOVDQU, store: VMOVDQU,
		loads: func(*lane) int { return 2 }, lanes32: true, zero: func(r reg.VecVirtual) { VPXOR(r, r, r) },
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
	zmmWin = &winVec{bytes: zmmBytes, alloc: ZMM, zero: func(r reg.VecVirtual) { VPXORD(r, r, r) }, move: func(a, b Op) { VMOVDQA64(a, b) }, load: func(a, b Op) { VMOVDQU64(a, b) }, store: func(a, b Op) { VMOVDQU64(a, b) },
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
// loop carries. AVX2's 32-bit lanes carry only W_2 (window32).
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
	// The first span's W is the loaded window sum, kept apart (windowLoop).
	for _, s := range v.spans(l)[1:] {
		st.prev[s] = v.alloc()
	}
	return st
}

// seed fills the state for the first windowed vector from the output
// vector before it, out0 (the scan of the first vector, carry included):
// st.out, w0 (its loaded window sum) and st's register steps. A step at span
// s needs the previous vector's W_s only in its top s elements, and there
// W_s[i] = out0[i] - out0[i-s] (all inside the first vector).
func (v *winVec) seed(l *lane, st windowState, w0, out0 reg.VecVirtual) {
	v.move(out0, st.out)
	for i, s := range v.spans(l) {
		into := w0
		if i > 0 {
			into = st.prev[s]
		}
		t := v.shiftIn(l, out0, out0, s)
		l.sub(t, out0, into)
	}
}

// loadWindow loads the first window sum of the vector at byte offset off of
// p into w: W_2 = x + x one element back (the second operand from memory),
// or W_4 from four loads where shiftIn cannot step by the span. back is the
// element offset of the input (0 inclusive, 1 exclusive: the exclusive scan
// is the inclusive scan of the input one element back).
func (v *winVec) loadWindow(l *lane, p reg.Register, off, back int, w reg.VecVirtual) {
	e := l.bytes()
	v.load(Mem{Base: p, Disp: off - back*e}, w)
	if v.loads(l) == 4 {
		y := v.alloc()
		v.load(Mem{Base: p, Disp: off - (back+2)*e}, y)
		l.add(Mem{Base: p, Disp: off - (back+1)*e}, w, w)
		l.add(Mem{Base: p, Disp: off - (back+3)*e}, y, y)
		l.add(y, w, w)
		return
	}
	l.add(Mem{Base: p, Disp: off - (back+1)*e}, w, w)
}

// finish computes the whole window sum W_N of a vector from its loaded
// window sum cur and the previous vector's, prev. The register steps read
// the previous vector's W_s from in and leave this vector's in out, each
// computed straight into out's register for span s, so the next vector
// finds it there with no move.
func (v *winVec) finish(l *lane, cur, prev reg.VecVirtual, in, out windowState) reg.VecVirtual {
	if v.lanes32 && l.bits == 32 {
		return window32(l, cur, prev)
	}
	spans := v.spans(l)
	win := cur
	for i, s := range spans {
		next := v.alloc()
		if i+1 < len(spans) {
			next = out.prev[spans[i+1]]
		}
		from := prev
		if i > 0 {
			from = in.prev[s]
		}
		t := v.shiftIn(l, from, win, s)
		l.add(t, win, next)
		win = next
	}
	return win
}

// step scans one vector into dst at off: its window sum (from its loaded
// window cur and the previous vector's, prev) plus the previous output
// vector (in.out), left in out.out.
func (v *winVec) step(l *lane, dst reg.Register, off int, cur, prev reg.VecVirtual, in, out windowState) {
	win := v.finish(l, cur, prev, in, out)
	l.add(in.out, win, out.out)
	v.store(out.out, Mem{Base: dst, Disp: off})
}

// window32 finishes a 32-bit AVX2 window sum from W_2 (w2) and the previous
// vector's (prev) with one shuffle across lanes instead of the doubling steps'
// two. W_8[i] = W_2[i] + W_2[i-2] + W_2[i-4] + W_2[i-6]. With T = W_2 moved
// up one lane (vperm2i128 of the previous and this W_2) and U = W_2 + T,
// W_8 = U + U[i-2]. U[i-2] is one vpalignr of U and U moved up one lane,
// and U moved up one lane is T + (W_2 moved up two lanes) = T + the
// previous vector's W_2: an add instead of a second vperm2i128. So a
// vector costs seven vector operations with the chain add, one of them a
// shuffle across lanes (the doubling steps: seven, two across lanes).
func window32(l *lane, w2, prev reg.VecVirtual) reg.VecVirtual {
	t, u, v := YMM(), YMM(), YMM()
	VPERM2I128(U8(0x21), w2, prev, t) // lane 0 = previous W_2's lane 1, lane 1 = W_2's lane 0
	l.add(t, w2, u)
	l.add(t, prev, v)
	VPALIGNR(U8(8), v, u, v) // U two elements up: from V in each lane's low half
	l.add(v, u, u)
	return u
}

// windowLoop emits the windowed loop of a kernel named name after its first
// vector (out0, already stored; p, dst and n advanced past it): to the
// in-lane loop at inLane when dst is src or fewer than windowMinVectors
// vectors are left, else two vectors per iteration with the carried state
// alternating between a and b, at most one more, and the carry c for what
// follows (the last sum written plus, for the exclusive form, the last
// input element), then a jump to next.
func (v *winVec) loop(l *lane, name string, excl bool, p, dst, n reg.Register, c, out0 reg.VecVirtual, advance func(int), inLane, next string) {
	back, ws, a, b := v.enter(l, excl, p, dst, n, windowMinVectors, inLane)
	v.seed(l, b, ws[3], out0)
	for i := 0; i < windowAhead; i++ {
		v.loadWindow(l, p, i*v.bytes, back, ws[i])
	}
	v.body(l, name, excl, back, p, dst, n, c, ws, a, b, advance, next)
}

// enter goes to inLane when dst is src (the loads one element back would
// read sums) or fewer than vectors whole vectors are left (seeding the
// state costs about what the in-lane scan of a few vectors does), and
// allocates the loop's state: the element offset of the input (1 for the
// exclusive scan, the inclusive scan of the input one element back), the
// loaded window sums of the last vectors by vector number mod 4 (the loop
// loads them windowAhead vectors ahead of the stores, and a vector reads
// its own and the previous one's), and the two sets of carried registers.
func (v *winVec) enter(l *lane, excl bool, p, dst, n reg.Register, vectors int, inLane string) (back int, ws [4]reg.VecVirtual, a, b windowState) {
	CMPQ(dst, p)
	JE(LabelRef(inLane))
	CMPQ(n, cmpImm(vectors*v.bytes))
	JB(LabelRef(inLane))
	if excl {
		back = 1
	}
	for i := range ws {
		ws[i] = v.alloc()
	}
	return back, ws, v.newState(l), v.newState(l)
}

// advancer returns the step that moves p and dst on by a number of bytes
// and n down by it.
func advancer(p, dst, n reg.Register) func(int) {
	return func(bytes int) {
		ADDQ(cmpImm(bytes), p)
		ADDQ(cmpImm(bytes), dst)
		SUBQ(cmpImm(bytes), n)
	}
}

// loopFromStart is loop for a kernel whose first vector takes the windowed
// scan too (AVX2, whose shiftIn moves by any element): it goes to inLane
// before scanning anything when dst is src or the input is short. The
// state before the first vector is the carry c and window sums of zero;
// the first vector's input one element back (and, exclusive, two) comes
// from the vector itself moved up in registers, zeros coming in, so
// nothing before src is read. The in-lane scan of the first vector and its
// constants stay off this path: a call's fixed cost was about a tenth of a
// 4 KiB call's time (32-bit lanes).
func (v *winVec) loopFromStart(l *lane, name string, excl bool, p, dst, n reg.Register, c reg.VecVirtual, advance func(int), inLane, next string) {
	back, ws, a, b := v.enter(l, excl, p, dst, n, 1+windowMinVectors, inLane)
	v.zero(ws[3])
	for _, s := range v.spans(l)[1:] {
		v.zero(b.prev[s])
	}
	v.move(c, b.out)
	x := v.alloc()
	v.load(Mem{Base: p}, x)
	if excl {
		x = v.shiftIn(l, ws[3], x, 1)
	}
	t := v.shiftIn(l, ws[3], x, 1)
	l.add(t, x, ws[0])
	for i := 1; i < windowAhead; i++ {
		v.loadWindow(l, p, i*v.bytes, back, ws[i])
	}
	v.body(l, name, excl, back, p, dst, n, c, ws, a, b, advance, next)
}

// body emits the windowed loop proper from the state before a vector (b,
// ws[3]) with the loaded window sums of it and the next windowAhead-1 in
// ws, through the carry for what follows, then a jump to next.
func (v *winVec) body(l *lane, name string, excl bool, back int, p, dst, n reg.Register, c reg.VecVirtual, ws [4]reg.VecVirtual, a, b windowState, advance func(int), next string) {
	// windowUnroll vectors per iteration, the count tested at the bottom:
	// it goes round while the next iteration's loads, windowAhead vectors
	// past its own, are inside src.
	CMPQ(n, cmpImm((windowUnroll+windowAhead)*v.bytes))
	JB(LabelRef(name + "_window_tail"))
	Label(name + "_window_loop")
	st := [2]windowState{b, a}
	for i := 0; i < windowUnroll; i++ {
		v.loadWindow(l, p, (i+windowAhead)*v.bytes, back, ws[(i+windowAhead)%4])
		v.step(l, dst, i*v.bytes, ws[i%4], ws[(i+3)%4], st[i%2], st[(i+1)%2])
	}
	advance(windowUnroll * v.bytes)
	CMPQ(n, cmpImm((windowUnroll+windowAhead)*v.bytes))
	JAE(LabelRef(name + "_window_loop"))
	// windowAhead to windowAhead+windowUnroll-1 vectors are left, the
	// first windowAhead of them loaded: straight-line code, loading the
	// rest as it goes.
	Label(name + "_window_tail")
	for i := 0; i < windowUnroll+windowAhead-1; i++ {
		if i >= windowAhead {
			CMPQ(n, cmpImm(v.bytes))
			JB(LabelRef(name + "_window_end"))
			v.loadWindow(l, p, 0, back, ws[i%4])
		}
		v.step(l, dst, 0, ws[i%4], ws[(i+3)%4], st[i%2], st[(i+1)%2])
		advance(v.bytes)
	}
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
