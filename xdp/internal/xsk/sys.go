package xsk

import (
	"math"
	"os"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The syscalls x/sys/unix has no typed wrapper for, and the wakeups.

func registerUMEM(fd int, umem []byte, frameSize uint32) error {
	reg := unix.XDPUmemReg{
		Addr: uint64(uintptr(unsafe.Pointer(&umem[0]))),
		Len:  uint64(len(umem)),
		Size: frameSize,
	}
	_, _, e := unix.Syscall6(unix.SYS_SETSOCKOPT, uintptr(fd), unix.SOL_XDP, unix.XDP_UMEM_REG,
		uintptr(unsafe.Pointer(&reg)), unsafe.Sizeof(reg), 0)
	if e != 0 {
		return e
	}
	return nil
}

func mmapOffsets(fd int) (unix.XDPMmapOffsets, error) {
	var off unix.XDPMmapOffsets
	n := uint32(unsafe.Sizeof(off))
	_, _, e := unix.Syscall6(unix.SYS_GETSOCKOPT, uintptr(fd), unix.SOL_XDP, unix.XDP_MMAP_OFFSETS,
		uintptr(unsafe.Pointer(&off)), uintptr(unsafe.Pointer(&n)), 0)
	if e != 0 {
		return off, e
	}
	return off, nil
}

// acquire marks a syscall on fd in progress; false once Close began.
func (s *Socket) acquire() bool {
	if s.use.Add(1) < 0 {
		s.use.Add(-1)
		return false
	}
	return true
}

func (s *Socket) release() { s.use.Add(-1) }

// closeWait bounds how long Close waits for syscalls in progress (they
// never block: MSG_DONTWAIT, getsockopt).
const closeWait = time.Second

// Stats returns the kernel's counters for the socket (drops for a full RX
// ring or an empty fill ring, invalid descriptors).
func (s *Socket) Stats() (unix.XDPStatistics, error) {
	var st unix.XDPStatistics
	if !s.acquire() {
		return st, os.ErrClosed
	}
	defer s.release()
	n := uint32(unsafe.Sizeof(st))
	_, _, e := unix.Syscall6(unix.SYS_GETSOCKOPT, uintptr(s.fd), unix.SOL_XDP, unix.XDP_STATISTICS,
		uintptr(unsafe.Pointer(&st)), uintptr(unsafe.Pointer(&n)), 0)
	if e != 0 {
		return st, e
	}
	return st, nil
}

// Kick asks the kernel to send what the TX ring holds (in copy mode the
// sending happens inside this call). EAGAIN, EBUSY and ENOBUFS mean the
// kernel is busy and will take the frames on a later kick: not errors.
//
// It is a raw syscall on the cached descriptor: on the reply path of every
// datagram, the poller's wrapper and x/sys's Sendto cost a goroutine stack
// growth and scheduler hand-offs that were measured at a third of the
// path's CPU time. The call never blocks (MSG_DONTWAIT).
func (s *Socket) Kick() error {
	if !s.acquire() {
		return os.ErrClosed
	}
	_, _, e := unix.RawSyscall6(unix.SYS_SENDTO, uintptr(s.fd), 0, 0, unix.MSG_DONTWAIT, 0, 0)
	s.release()
	switch e {
	case 0, unix.EAGAIN, unix.EBUSY, unix.ENOBUFS:
		return nil
	}
	return e
}

// WakeRX wakes a driver that sleeps until user space has filled frames
// (need-wakeup on the fill ring).
func (s *Socket) WakeRX() {
	if !s.acquire() {
		return
	}
	unix.RawSyscall6(unix.SYS_RECVFROM, uintptr(s.fd), 0, 0, unix.MSG_DONTWAIT, 0, 0)
	s.release()
}

// WaitRX blocks until the RX ring has descriptors or the socket is closed
// (then it returns the poller's error, for which errors.Is(err,
// os.ErrClosed) holds). The ring is checked after the poller is armed, so
// a frame that arrives in between is not missed.
func (s *Socket) WaitRX() error {
	return s.raw.Read(s.rxReady)
}

// Close waits for syscalls in progress, closes the descriptor and wakes
// WaitRX. The rings and UMEM stay mapped (the mappings keep the kernel
// socket alive) until Unmap, which the caller runs once no goroutine
// touches the socket any more.
func (s *Socket) Close() error {
	for {
		u := s.use.Load()
		if u < 0 {
			return os.ErrClosed // closed before
		}
		if s.use.CompareAndSwap(u, u+math.MinInt64) {
			break
		}
	}
	deadline := time.Now().Add(closeWait)
	for s.use.Load() != math.MinInt64 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	return s.file.Close()
}

// Unmap releases the rings and the UMEM. The Socket is unusable after it.
func (s *Socket) Unmap() { s.unmap() }

func (s *Socket) unmap() {
	for _, m := range []*[]byte{&s.fill.mem, &s.comp.mem, &s.rx.mem, &s.tx.mem, &s.umem} {
		if *m != nil {
			unix.Munmap(*m)
			*m = nil
		}
	}
}
