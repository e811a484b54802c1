//go:build linux

package proxy

import (
	"net"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Probing a pooled connection before a request that may not be resent
// once written (replay.go): a POST written on a connection the upstream
// closed while it idled fails after the write, and then gets 502 rather
// than a second run. Most such closes happened long before (an origin's
// keep-alive timeout: Apache's is 5 s), and the FIN is already queued: a
// non-blocking MSG_PEEK sees it, and the proxy takes another connection
// instead. One system call, for non-resendable requests on pooled
// connections only; an idempotent request is simply resent if it fails.
// (The event loop needs no probe: its idle connections are in its epoll
// set, and an upstream's close drops them as it arrives.)

// prober peeks at an upstream connection's socket without blocking. It
// is made once per connection (dial), so a probe allocates nothing.
type prober struct {
	rc     syscall.RawConn
	fn     func(fd uintptr) bool
	closed bool
	buf    [1]byte
}

func newProber(nc net.Conn) *prober {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	p := &prober{rc: rc}
	p.fn = p.peek
	return p
}

// closedByPeer reports whether the upstream closed the connection (or sent
// bytes while it idled, which makes it unusable as well).
func (p *prober) closedByPeer() bool {
	if p == nil {
		return false
	}
	p.closed = false
	if err := p.rc.Read(p.fn); err != nil {
		return true
	}
	return p.closed
}

// peek runs inside RawConn.Read; it returns true always (false would make
// Read wait for the socket to become readable).
func (p *prober) peek(fd uintptr) bool {
	_, _, errno := unix.Syscall6(unix.SYS_RECVFROM, fd, uintptr(unsafe.Pointer(&p.buf[0])), uintptr(len(p.buf)),
		unix.MSG_PEEK|unix.MSG_DONTWAIT, 0, 0)
	switch errno {
	case unix.EAGAIN, unix.EINTR:
		// Nothing queued: open as far as can be told.
	case 0:
		p.closed = true // 0 bytes: FIN; more: bytes nobody asked for
	default:
		p.closed = true // reset
	}
	return true
}
