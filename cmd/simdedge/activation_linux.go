package main

import (
	"net"

	"golang.org/x/sys/unix"
)

// isListening reports whether l's socket is listening (SO_ACCEPTCONN):
// net.FileListener takes any stream socket, and a connected one passed by
// mistake (Accept=yes in the .socket unit) would fail only at the first
// accept.
func isListening(l *net.TCPListener) bool {
	rc, err := l.SyscallConn()
	if err != nil {
		return false
	}
	on := 0
	var serr error
	if err := rc.Control(func(fd uintptr) { on, serr = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_ACCEPTCONN) }); err != nil || serr != nil {
		return false
	}
	return on == 1
}
