package xsk

import (
	"errors"
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

// Stats returns the kernel's counters for the socket (drops for a full RX
// ring or an empty fill ring, invalid descriptors).
func (s *Socket) Stats() (unix.XDPStatistics, error) {
	var st unix.XDPStatistics
	var e unix.Errno
	err := s.raw.Control(func(fd uintptr) {
		n := uint32(unsafe.Sizeof(st))
		_, _, e = unix.Syscall6(unix.SYS_GETSOCKOPT, fd, unix.SOL_XDP, unix.XDP_STATISTICS,
			uintptr(unsafe.Pointer(&st)), uintptr(unsafe.Pointer(&n)), 0)
	})
	if err != nil {
		return st, err
	}
	if e != 0 {
		return st, e
	}
	return st, nil
}

// Kick asks the kernel to send what the TX ring holds (in copy mode the
// sending happens inside this call). EAGAIN, EBUSY and ENOBUFS mean the
// kernel is busy and will take the frames on a later kick: not errors.
func (s *Socket) Kick() error {
	var e error
	// Control, not Write: it only pins the descriptor, so a kick never
	// waits behind another goroutine's use of the socket.
	err := s.raw.Control(func(fd uintptr) {
		e = unix.Sendto(int(fd), nil, unix.MSG_DONTWAIT, nil)
	})
	if err != nil {
		return err
	}
	if e == nil || errors.Is(e, unix.EAGAIN) || errors.Is(e, unix.EBUSY) || errors.Is(e, unix.ENOBUFS) {
		return nil
	}
	return e
}

// WakeRX wakes a driver that sleeps until user space has filled frames
// (need-wakeup on the fill ring).
func (s *Socket) WakeRX() {
	// Control: Read would queue behind the RX goroutine parked in WaitRX.
	s.raw.Control(func(fd uintptr) {
		unix.Recvfrom(int(fd), nil, unix.MSG_DONTWAIT)
	})
}

// WaitRX blocks until the RX ring has descriptors or the socket is closed
// (then it returns the poller's error, for which errors.Is(err,
// os.ErrClosed) holds). The ring is checked after the poller is armed, so
// a frame that arrives in between is not missed.
func (s *Socket) WaitRX() error {
	return s.raw.Read(func(uintptr) bool { return s.RXReady() })
}

// Close closes the descriptor and wakes WaitRX. The rings and UMEM stay
// mapped (the mappings keep the kernel socket alive) until Unmap, which
// the caller runs once no goroutine touches the socket any more.
func (s *Socket) Close() error { return s.file.Close() }

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
