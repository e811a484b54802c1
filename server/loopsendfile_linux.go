package server

import (
	"os"

	"golang.org/x/sys/unix"
)

// sendfile(2) on the event loop (static files, issue 23). A file body is
// recorded on the connection by ResponseWriter.SendFile (loopSendfile)
// after its head; the loop serves no further pipelined request until it
// is out. write() sends c.out first, then the file (sendFileOut): each
// call sends at most loopFileTurn bytes, keeping the offset across
// partial sends and EAGAIN; EAGAIN (or the turn's share used up) switches
// the connection to EPOLLOUT like any blocked output, so back-pressure
// and the Write timeout (each step that makes progress re-arms it) work
// as for c.out. A file that ends early (it shrank) closes the connection:
// its head promised more.

// loopFileTurn bounds what one write of a connection sends from a file,
// so that a fast reader of a large file does not hold the loop: about as
// long as a turn spends on 16 KiB of proxied body times a few, a few
// hundred microseconds of copying inside the kernel.
const loopFileTurn = 1 << 20

// loopSendfile records f[off:off+n] as c's pending file body. It reports
// false when the descriptor cannot be duplicated (the caller copies).
func loopSendfile(c *conn, f *os.File, off, n int64) bool {
	rc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	dup := -1
	rc.Control(func(fd uintptr) {
		dup, err = unix.FcntlInt(fd, unix.F_DUPFD_CLOEXEC, 0)
	})
	if err != nil || dup < 0 {
		return false
	}
	c.file = fileOut{fd: dup, off: off, n: n}
	return true
}

// dropFile closes a pending file body (the connection closes).
func (c *conn) dropFile() {
	if c.file.n > 0 {
		unix.Close(c.file.fd)
	}
	c.file = fileOut{}
}

// sendFileOut sends the pending file body after c.out went out. It
// reports whether it is all sent; false with the connection still open
// means it waits for EPOLLOUT.
func (lp *loop) sendFileOut(lc *lconn, now int64) bool {
	c := lc.c
	budget := int64(loopFileTurn)
	for c.file.n > 0 {
		if budget <= 0 {
			// The turn's share: the socket is writable, so EPOLLOUT
			// brings the connection back at once, after the others.
			lp.waitOut(lc, now)
			return false
		}
		off := c.file.off
		k, err := unix.Sendfile(lc.fd, c.file.fd, &off, int(min(c.file.n, budget)))
		if err == unix.EINTR {
			continue
		}
		if err == unix.EAGAIN {
			lp.waitOut(lc, now)
			return false
		}
		if err != nil || k <= 0 {
			// An error, or the file ended before its length.
			lp.closeConn(lc)
			return false
		}
		c.file.off += int64(k)
		c.file.n -= int64(k)
		budget -= int64(k)
		if lc.writing {
			if d := c.cfg.Timeouts.Write; d > 0 {
				lc.wdl = now + int64(d)
			}
		}
	}
	unix.Close(c.file.fd)
	c.file = fileOut{}
	return true
}

// waitOut registers lc for EPOLLOUT under the Write timeout, as write
// does when a send would block.
func (lp *loop) waitOut(lc *lconn, now int64) {
	if lc.writing {
		return
	}
	lc.writing = true
	lp.ctl(unix.EPOLL_CTL_MOD, lc.fd, unix.EPOLLOUT)
	if d := lc.c.cfg.Timeouts.Write; d > 0 {
		lc.wdl = now + int64(d)
	}
}
