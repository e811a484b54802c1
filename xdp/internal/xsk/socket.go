package xsk

import (
	"errors"
	"fmt"
	"math/bits"
	"os"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Errors of Open; package xdp maps them to its own explanations.
var (
	ErrOptions = errors.New("xsk: invalid options")
	// ErrNoAFXDP means the kernel has no AF_XDP (CONFIG_XDP_SOCKETS).
	ErrNoAFXDP = errors.New("xsk: the kernel has no AF_XDP sockets")
	// ErrPermission means socket or bind was refused (needs CAP_NET_RAW,
	// and CAP_NET_ADMIN for the interface).
	ErrPermission = errors.New("xsk: permission denied")
	// ErrQueue means bind refused the queue: the device has no such RX
	// queue.
	ErrQueue = errors.New("xsk: no such queue")
)

// Options describe one socket. FrameSize must be a power of two between
// 2048 and the page size (the kernel's aligned-chunk mode); RingSize, the
// entries of each of the four rings, a power of two.
type Options struct {
	Ifindex   int
	Queue     int
	Frames    int
	FrameSize int
	RingSize  int
	// Copy forces copy mode. Without it the kernel uses zero-copy where
	// the driver supports it and copies otherwise (veth copies).
	Copy bool
}

// Socket is one AF_XDP socket with its own UMEM.
//
// Concurrency: each ring has one user-space side and must be driven by
// one goroutine at a time: Fill (fill ring), Receive (RX ring), Transmit
// (TX ring) and Complete (completion ring) may run concurrently with each
// other, but each with itself only under the caller's lock. Frame and
// Buffer only compute views of the UMEM.
type Socket struct {
	file *os.File // owns the descriptor; its poller wakes RX waiters
	raw  syscall.RawConn
	fd   int
	// use counts goroutines in a syscall on fd outside the poller (kicks,
	// wakeups, statistics); Close sets its sign bit, then waits for them,
	// so the descriptor is never used after it is closed and reused.
	use atomic.Int64
	// rxReady is WaitRX's poller callback, made once: a closure built per
	// wait would be an allocation per idle wakeup.
	rxReady func(uintptr) bool

	umem      []byte
	frameSize uint64
	fill      addrRing
	comp      addrRing
	rx        descRing
	tx        descRing
}

// Open creates the socket, its UMEM and rings, and binds it to the queue.
func Open(o Options) (s *Socket, err error) {
	if o.FrameSize < 2048 || o.FrameSize > os.Getpagesize() || bits.OnesCount(uint(o.FrameSize)) != 1 ||
		o.RingSize < 1 || bits.OnesCount(uint(o.RingSize)) != 1 || o.Frames < 1 || o.Ifindex < 1 || o.Queue < 0 {
		return nil, ErrOptions
	}
	fd, err := unix.Socket(unix.AF_XDP, unix.SOCK_RAW|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, 0)
	if err != nil {
		return nil, sysErr("socket", err)
	}
	s = &Socket{frameSize: uint64(o.FrameSize)}
	opened := s // s, the named result, is nil on the error returns below
	defer func() {
		if err != nil {
			opened.unmap()
			if opened.file != nil {
				opened.file.Close()
			} else {
				unix.Close(fd)
			}
		}
	}()
	// mmap gives page alignment, which keeps frames from straddling pages.
	s.umem, err = unix.Mmap(-1, 0, o.Frames*o.FrameSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, sysErr("mmap umem", err)
	}
	if err = registerUMEM(fd, s.umem, uint32(o.FrameSize)); err != nil {
		return nil, sysErr("register umem", err)
	}
	for _, opt := range []int{unix.XDP_UMEM_FILL_RING, unix.XDP_UMEM_COMPLETION_RING, unix.XDP_RX_RING, unix.XDP_TX_RING} {
		if err = unix.SetsockoptInt(fd, unix.SOL_XDP, opt, o.RingSize); err != nil {
			return nil, sysErr("ring size", err)
		}
	}
	off, err := mmapOffsets(fd)
	if err != nil {
		return nil, sysErr("mmap offsets", err)
	}
	size := uint32(o.RingSize)
	const addrSize, descSize = 8, 16
	maps := []struct {
		off   unix.XDPRingOffset
		pgoff int64
		esz   uint64
		init  func([]byte)
	}{
		{off.Fr, unix.XDP_UMEM_PGOFF_FILL_RING, addrSize, func(m []byte) { s.fill.init(m, off.Fr, size) }},
		{off.Cr, unix.XDP_UMEM_PGOFF_COMPLETION_RING, addrSize, func(m []byte) { s.comp.init(m, off.Cr, size) }},
		{off.Rx, unix.XDP_PGOFF_RX_RING, descSize, func(m []byte) { s.rx.init(m, off.Rx, size) }},
		{off.Tx, unix.XDP_PGOFF_TX_RING, descSize, func(m []byte) { s.tx.init(m, off.Tx, size) }},
	}
	for _, m := range maps {
		mem, err := unix.Mmap(fd, m.pgoff, int(m.off.Desc+uint64(size)*m.esz), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
		if err != nil {
			return nil, sysErr("mmap ring", err)
		}
		m.init(mem)
	}
	var flags uint16 = unix.XDP_USE_NEED_WAKEUP
	if o.Copy {
		flags |= unix.XDP_COPY
	}
	if err = bind(fd, &unix.SockaddrXDP{Flags: flags, Ifindex: uint32(o.Ifindex), QueueID: uint32(o.Queue)}); err != nil {
		if errors.Is(err, unix.EINVAL) {
			// The kernel's answer to a queue beyond the device's.
			return nil, fmt.Errorf("%w: queue %d: %w", ErrQueue, o.Queue, err)
		}
		return nil, sysErr("bind", err)
	}
	// A non-blocking descriptor handed to os.NewFile joins Go's poller,
	// so a goroutine can wait for RX without holding a thread, and Close
	// wakes it.
	s.fd = fd
	s.rxReady = func(uintptr) bool { return s.RXReady() }
	s.file = os.NewFile(uintptr(fd), "xsk")
	if s.raw, err = s.file.SyscallConn(); err != nil {
		return nil, err
	}
	return s, nil
}

// bindTries and bindPause bound how long bind waits for a queue to come
// free: the kernel releases a closed socket's hold on its queue in a
// deferred work item, so a socket opened right after another closed (a
// restart, a test) can find the queue still busy for a moment.
const (
	bindTries = 40
	bindPause = 25 * time.Millisecond
)

func bind(fd int, sa *unix.SockaddrXDP) error {
	for try := 0; ; try++ {
		err := unix.Bind(fd, sa)
		if !errors.Is(err, unix.EBUSY) {
			return err
		}
		if try == bindTries {
			return fmt.Errorf("queue %d in use by another AF_XDP socket: %w", sa.QueueID, err)
		}
		time.Sleep(bindPause)
	}
}

// sysErr wraps a syscall failure, marking the two causes package xdp
// explains to operators.
func sysErr(op string, err error) error {
	switch {
	case errors.Is(err, unix.EAFNOSUPPORT):
		return fmt.Errorf("%w: %s: %w", ErrNoAFXDP, op, err)
	case errors.Is(err, unix.EPERM), errors.Is(err, unix.EACCES):
		return fmt.Errorf("%w: %s: %w", ErrPermission, op, err)
	}
	return fmt.Errorf("xsk: %s: %w", op, err)
}

// FD returns the socket's descriptor, for registering it in an XSKMAP.
// It stays valid until Close.
func (s *Socket) FD() int { return s.fd }

// FrameSize is the size of one UMEM frame.
func (s *Socket) FrameSize() int { return int(s.frameSize) }

// Frames is the number of UMEM frames; frame i starts at address
// i*FrameSize.
func (s *Socket) Frames() int { return len(s.umem) / int(s.frameSize) }

// Base returns the address of the frame that holds addr (the kernel hands
// out addresses with the headroom added).
func (s *Socket) Base(addr uint64) uint64 { return addr &^ (s.frameSize - 1) }

// Frame returns the bytes a descriptor names, or false when the
// descriptor does not lie inside one frame of the UMEM.
func (s *Socket) Frame(d unix.XDPDesc) ([]byte, bool) {
	end := d.Addr + uint64(d.Len)
	if end > uint64(len(s.umem)) || end < d.Addr || d.Len == 0 || s.Base(d.Addr) != s.Base(end-1) {
		return nil, false
	}
	return s.umem[d.Addr:end:end], true
}

// Buffer returns the whole frame starting at base, for writing a frame
// to transmit.
func (s *Socket) Buffer(base uint64) []byte {
	return s.umem[base : base+s.frameSize : base+s.frameSize]
}

// Fill hands frames to the kernel to receive into and returns how many
// fit in the fill ring.
func (s *Socket) Fill(addrs []uint64) int {
	n, idx := s.fill.reserve(uint32(len(addrs)))
	for i := uint32(0); i < n; i++ {
		s.fill.addrs[(idx+i)&s.fill.mask] = addrs[i]
	}
	if n > 0 {
		s.fill.submit()
	}
	return int(n)
}

// FillNeedsWakeup reports whether the kernel waits for a syscall before
// it takes frames from the fill ring again (see WakeRX).
func (s *Socket) FillNeedsWakeup() bool { return s.fill.needWakeup() }

// Receive moves up to len(descs) received descriptors out of the RX ring
// and returns how many. The frames stay the caller's until it fills them
// again.
func (s *Socket) Receive(descs []unix.XDPDesc) int {
	n, idx := s.rx.peek(uint32(len(descs)))
	for i := uint32(0); i < n; i++ {
		descs[i] = s.rx.descs[(idx+i)&s.rx.mask]
	}
	if n > 0 {
		s.rx.release(n)
	}
	return int(n)
}

// RXReady reports whether the RX ring has descriptors to read.
func (s *Socket) RXReady() bool { return s.rx.available(1) > 0 }

// Transmit queues descriptors on the TX ring and returns how many fit;
// Kick makes the kernel send them.
func (s *Socket) Transmit(descs []unix.XDPDesc) int {
	n, idx := s.tx.reserve(uint32(len(descs)))
	for i := uint32(0); i < n; i++ {
		s.tx.descs[(idx+i)&s.tx.mask] = descs[i]
	}
	if n > 0 {
		s.tx.submit()
	}
	return int(n)
}

// TXQueued returns how many submitted descriptors the kernel has not
// taken from the TX ring yet. Unlike Transmit it reads only the shared
// indices, so any goroutine may call it.
func (s *Socket) TXQueued() int { return int(s.tx.producer.Load() - s.tx.consumer.Load()) }

// TXNeedsWakeup reports whether the kernel sends queued frames only after
// a Kick (always so in copy mode).
func (s *Socket) TXNeedsWakeup() bool { return s.tx.needWakeup() }

// Complete moves up to len(addrs) addresses of sent frames out of the
// completion ring and returns how many.
func (s *Socket) Complete(addrs []uint64) int {
	n, idx := s.comp.peek(uint32(len(addrs)))
	for i := uint32(0); i < n; i++ {
		addrs[i] = s.comp.addrs[(idx+i)&s.comp.mask]
	}
	if n > 0 {
		s.comp.release(n)
	}
	return int(n)
}
