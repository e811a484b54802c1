package xsk

import (
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ring is the part common to the four rings: the shared indices and flags
// (pointers into the mapping), the mask, and the mapping itself.
type ring struct {
	mem []byte // the mmap'd ring, unmapped by Socket.Close

	// producer and consumer point into mem. The kernel writes one of
	// them and user space the other; which one depends on the ring.
	producer *atomic.Uint32
	consumer *atomic.Uint32
	// flags carries XDP_RING_NEED_WAKEUP; only the kernel writes it.
	flags *atomic.Uint32

	size uint32 // entries, a power of two
	mask uint32 // size-1: indices run freely and wrap through the mask

	// cachedProd and cachedCons are this side's copies of the two
	// indices: its own index (authoritative, published by a store) and
	// the other side's (refreshed by a load when the cache runs out).
	cachedProd uint32
	cachedCons uint32
}

func (r *ring) init(mem []byte, off unix.XDPRingOffset, size uint32) {
	r.mem = mem
	r.producer = (*atomic.Uint32)(unsafe.Pointer(&mem[off.Producer]))
	r.consumer = (*atomic.Uint32)(unsafe.Pointer(&mem[off.Consumer]))
	r.flags = (*atomic.Uint32)(unsafe.Pointer(&mem[off.Flags]))
	r.size, r.mask = size, size-1
	r.cachedProd = r.producer.Load()
	r.cachedCons = r.consumer.Load()
}

// needWakeup reports whether the kernel asked to be woken by a syscall
// before it processes this ring again (XDP_USE_NEED_WAKEUP).
func (r *ring) needWakeup() bool { return r.flags.Load()&unix.XDP_RING_NEED_WAKEUP != 0 }

// free returns how many entries a producer may write, reloading the
// consumer index only when the cached one leaves fewer than n.
func (r *ring) free(n uint32) uint32 {
	if f := r.size - (r.cachedProd - r.cachedCons); f >= n {
		return f
	}
	r.cachedCons = r.consumer.Load()
	return r.size - (r.cachedProd - r.cachedCons)
}

// reserve claims up to n entries for a producer and returns how many and
// the index of the first. They become visible to the kernel on submit.
func (r *ring) reserve(n uint32) (got, idx uint32) {
	if f := r.free(n); f < n {
		n = f
	}
	idx = r.cachedProd
	r.cachedProd += n
	return n, idx
}

// submit publishes every reserved entry to the kernel.
func (r *ring) submit() { r.producer.Store(r.cachedProd) }

// available returns how many entries a consumer may read, reloading the
// producer index only when the cache is empty.
func (r *ring) available(n uint32) uint32 {
	a := r.cachedProd - r.cachedCons
	if a == 0 {
		r.cachedProd = r.producer.Load()
		a = r.cachedProd - r.cachedCons
	}
	if a > n {
		a = n
	}
	return a
}

// peek returns up to n readable entries and the index of the first; the
// consumer reads them, then calls release.
func (r *ring) peek(n uint32) (got, idx uint32) {
	return r.available(n), r.cachedCons
}

// release hands n read entries back to the kernel.
func (r *ring) release(n uint32) {
	r.cachedCons += n
	r.consumer.Store(r.cachedCons)
}

// addrRing is a ring of UMEM addresses: fill (user space produces) and
// completion (the kernel produces).
type addrRing struct {
	ring
	addrs []uint64
}

func (r *addrRing) init(mem []byte, off unix.XDPRingOffset, size uint32) {
	r.ring.init(mem, off, size)
	r.addrs = unsafe.Slice((*uint64)(unsafe.Pointer(&mem[off.Desc])), size)
}

// descRing is a ring of descriptors: RX (the kernel produces) and TX (user
// space produces).
type descRing struct {
	ring
	descs []unix.XDPDesc
}

func (r *descRing) init(mem []byte, off unix.XDPRingOffset, size uint32) {
	r.ring.init(mem, off, size)
	r.descs = unsafe.Slice((*unix.XDPDesc)(unsafe.Pointer(&mem[off.Desc])), size)
}
