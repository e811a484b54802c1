//go:build linux

package server

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// The loop's system calls on non-blocking descriptors. They never block, so
// they go through RawSyscall: the ordinary Syscall path tells the runtime
// that the thread may block (entersyscall), and a call that happens to
// take longer than a scheduler tick makes sysmon hand the P to another
// thread. With the server pinned to one CPU, those hand-offs showed up as
// context switches after read and write (perf, 2-CPU VM, Go 1.26). The
// blocking epoll_wait keeps the ordinary path.

func rawRead(fd int, p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	n, _, e := unix.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

func rawWrite(fd int, p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	n, _, e := unix.RawSyscall(unix.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

// rawPoll is epoll_wait with a zero timeout (epoll_pwait without a signal
// mask: arm64 has no epoll_wait).
func rawPoll(epfd int, events []unix.EpollEvent) (int, error) {
	n, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(epfd), uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)), 0, 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}
