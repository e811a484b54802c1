package xsk

import (
	"testing"

	"golang.org/x/sys/unix"
)

// The rings against a simulated kernel: plain memory laid out as the
// kernel lays it out (producer, consumer, flags, then the entries), with
// the test playing the kernel's side. Indices start just below 2^32 so
// every test crosses the wrap-around of the free-running uint32 indices.

const testRingSize = 8

func testOffsets() unix.XDPRingOffset {
	return unix.XDPRingOffset{Producer: 0, Consumer: 64, Flags: 128, Desc: 192}
}

func newTestAddrRing(start uint32) *addrRing {
	mem := make([]byte, 192+testRingSize*8)
	var r addrRing
	r.init(mem, testOffsets(), testRingSize)
	r.producer.Store(start)
	r.consumer.Store(start)
	r.cachedProd, r.cachedCons = start, start
	return &r
}

// TestProducerRing plays the fill ring: user space produces, the
// "kernel" consumes.
func TestProducerRing(t *testing.T) {
	r := newTestAddrRing(^uint32(0) - 3)
	next := uint64(0)
	kernelNext := uint64(0)
	for round := range 20 {
		n, idx := r.reserve(5)
		if n == 0 && r.producer.Load()-r.consumer.Load() < r.size {
			t.Fatalf("round %d: nothing reserved in a ring with room", round)
		}
		for i := uint32(0); i < n; i++ {
			r.addrs[(idx+i)&r.mask] = next
			next++
		}
		if used := r.cachedProd - r.consumer.Load(); used > r.size {
			t.Fatalf("round %d: %d entries outstanding in a ring of %d", round, used, r.size)
		}
		r.submit()
		// The kernel consumes 3 per round, in order.
		for range 3 {
			c := r.consumer.Load()
			if c == r.producer.Load() {
				break
			}
			if got := r.addrs[c&r.mask]; got != kernelNext {
				t.Fatalf("round %d: kernel read %d, want %d", round, got, kernelNext)
			}
			kernelNext++
			r.consumer.Store(c + 1)
		}
	}
	if kernelNext < 50 {
		t.Fatalf("only %d entries went through", kernelNext)
	}
}

// TestConsumerRing plays the RX ring: the "kernel" produces, user space
// consumes.
func TestConsumerRing(t *testing.T) {
	mem := make([]byte, 192+testRingSize*16)
	var r descRing
	r.init(mem, testOffsets(), testRingSize)
	start := ^uint32(0) - 2
	r.producer.Store(start)
	r.consumer.Store(start)
	r.cachedProd, r.cachedCons = start, start
	produced, consumed := uint64(0), uint64(0)
	for round := range 30 {
		// The kernel fills whatever room there is, up to 5.
		for range 5 {
			p := r.producer.Load()
			if p-r.consumer.Load() == r.size {
				break
			}
			r.descs[p&r.mask] = unix.XDPDesc{Addr: produced, Len: 1}
			produced++
			r.producer.Store(p + 1)
		}
		n, idx := r.peek(4)
		for i := uint32(0); i < n; i++ {
			if got := r.descs[(idx+i)&r.mask].Addr; got != consumed {
				t.Fatalf("round %d: read %d, want %d", round, got, consumed)
			}
			consumed++
		}
		r.release(n)
		if r.consumer.Load() != r.cachedCons {
			t.Fatalf("round %d: consumer index not published", round)
		}
	}
	if consumed < 60 || produced-consumed > testRingSize {
		t.Fatalf("produced %d, consumed %d", produced, consumed)
	}
}

func TestNeedWakeup(t *testing.T) {
	r := newTestAddrRing(0)
	if r.needWakeup() {
		t.Fatal("flag clear, needWakeup true")
	}
	r.flags.Store(unix.XDP_RING_NEED_WAKEUP)
	if !r.needWakeup() {
		t.Fatal("flag set, needWakeup false")
	}
}

func TestOpenRejectsBadOptions(t *testing.T) {
	for _, o := range []Options{
		{Ifindex: 1, Frames: 16, FrameSize: 3000, RingSize: 8},
		{Ifindex: 1, Frames: 16, FrameSize: 1024, RingSize: 8},
		{Ifindex: 1, Frames: 16, FrameSize: 2048, RingSize: 12},
		{Ifindex: 0, Frames: 16, FrameSize: 2048, RingSize: 8},
		{Ifindex: 1, Frames: 0, FrameSize: 2048, RingSize: 8},
		{Ifindex: 1, Frames: 16, FrameSize: 2048, RingSize: 8, Queue: -1},
	} {
		if _, err := Open(o); err != ErrOptions {
			t.Errorf("Open(%+v) = %v, want ErrOptions", o, err)
		}
	}
}
