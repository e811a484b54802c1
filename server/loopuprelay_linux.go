//go:build linux

package server

import (
	"io"
	"os"
	"time"

	phttp "github.com/simdedge/simdedge/parse/http"
	"github.com/simdedge/simdedge/server/internal/rbuf"
	"github.com/simdedge/simdedge/server/upstream"
	"golang.org/x/sys/unix"
)

// The bytes of an exchange on the loop's own proxy (loopproxy_linux.go):
// the request goes out in one write, the response head is parsed by the
// proxy, the body is relayed through the client's ResponseWriter after each
// upstream read, and while the client's output is blocked the upstream
// connection is registered for nothing (back-pressure, at most one
// upstream read buffered).

const (
	// upReadBuf is an upstream connection's read buffer, the goroutine
	// proxy's size; it bounds what one upstream read adds to the client's
	// pending output.
	upReadBuf = 16 << 10
)

// upSend writes the rest of the request; once it is out, the exchange
// waits for the response head.
func (lp *loop) upSend(lc *lconn, now int64) {
	ex := lc.ex
	u := ex.u
	for u.wpos < len(u.out) {
		n, err := rawWrite(u.fd, u.out[u.wpos:])
		if err == unix.EINTR {
			continue
		}
		if err == unix.EAGAIN {
			if !u.outReg {
				u.outReg = true
				lp.ctl(unix.EPOLL_CTL_MOD, u.fd, unix.EPOLLOUT)
			}
			lp.exDeadline(ex, now, ex.pool.header)
			return
		}
		if err != nil {
			lp.upFailed(lc, err, now)
			return
		}
		u.wpos += n
	}
	if u.outReg {
		// Registered for EPOLLOUT (a partial write or a connect that
		// completed): wait for the response instead.
		u.outReg = false
		lp.ctl(unix.EPOLL_CTL_MOD, u.fd, unix.EPOLLIN)
	}
	lp.exDeadline(ex, now, ex.pool.header)
}

// upEvent handles readiness of an upstream connection.
func (lp *loop) upEvent(u *lupconn, events uint32, now int64) {
	lc := u.lc
	if lc != nil {
		defer lp.exPanic(lc)
	}
	if lc == nil {
		// Idle in its pool: the upstream closed it (or sent bytes it
		// should not have). It cannot be reused.
		lp.dropIdle(u)
		return
	}
	switch {
	case u.rd.got:
		// prefetch read it (under the conditions of the default case).
		lp.upRead(lc, now)
	case u.connecting:
		if events&(unix.EPOLLOUT|unix.EPOLLERR|unix.EPOLLHUP) == 0 {
			return
		}
		u.connecting = false
		if soerr, err := unix.GetsockoptInt(u.fd, unix.SOL_SOCKET, unix.SO_ERROR); err != nil || soerr != 0 {
			if err == nil {
				err = os.NewSyscallError("connect", unix.Errno(soerr))
			}
			lp.attemptFailed(lc, upstream.Failure{Err: err, Kind: upstream.Classify(err, true), Fresh: true}, now)
			return
		}
		lp.upSend(lc, now)
	case u.outReg:
		if events&(unix.EPOLLOUT|unix.EPOLLERR|unix.EPOLLHUP) != 0 {
			lp.upSend(lc, now)
		}
	default:
		if events&(unix.EPOLLIN|unix.EPOLLERR|unix.EPOLLHUP) != 0 {
			lp.upRead(lc, now)
		}
	}
}

// upRead reads once what the upstream has and relays it.
func (lp *loop) upRead(lc *lconn, now int64) {
	u := lc.ex.u
	// A head or a chunk line can fill the buffer: the parser and the
	// chunk decoder bound them, so it grows a bounded number of times.
	// (A read prefetched by the ring was compacted for already.)
	var n int
	var err error
	if u.rd.got {
		n, err = u.rd.take()
	} else {
		u.buf, u.w = rbuf.Compact(u.buf, u.r, u.w)
		u.r = 0
		n, err = rawRead(u.fd, u.buf[u.w:])
	}
	switch {
	case err == unix.EAGAIN || err == unix.EINTR:
		return
	case err != nil:
		lp.upFailed(lc, os.NewSyscallError("read", err), now)
		return
	case n == 0:
		lp.upFailed(lc, io.EOF, now)
		return
	}
	u.w += n
	lp.upRelay(lc, now)
}

// upRelay parses the response head once it is complete, then passes the
// body bytes received to the client's ResponseWriter and writes them out.
func (lp *loop) upRelay(lc *lconn, now int64) {
	ex := lc.ex
	u := ex.u
	w := &lc.c.resp
	if !ex.gotHead {
		n, err := ex.up.ParseResponseHead(u.buf[u.r:u.w], &u.resp, ex.isHead)
		u.r += n
		if err == phttp.ErrNeedMore {
			return
		}
		if err != nil {
			lp.attemptFailed(lc, upstream.Failure{Err: err, Kind: upstream.Broken, Written: true, Read: true, Fresh: u.fresh}, now)
			return
		}
		// The driver decides on a status the policy may retry before
		// anything of the response reaches the client.
		if ex.a.Head(u.resp.Status, func() time.Duration { return time.Duration(now) }) == upstream.StepRetry {
			u.lc, ex.u = nil, nil
			lp.closeUp(u) // the response is dropped
			lp.backoffWait(lc, now)
			return
		}
		ex.gotHead = true
		if c := lc.c; c.lst != nil {
			ex.a.Target().ObserveLatency(c.shard, time.Duration(now-ex.attemptAt))
		}
		// The request is sent: its buffer is free.
		u.out = ex.up.WriteResponseHead(w, &u.resp, u.out[:0], ex.isHead)
		if ex.isHead || u.resp.Body == phttp.BodyNone {
			lp.exDone(lc, true, now)
			return
		}
		switch u.resp.Body {
		case phttp.BodyLength:
			u.ld.Reset(u.resp.ContentLength)
		case phttp.BodyChunked:
			u.cd.Reset()
			if u.cd.OnTrailer == nil {
				u.cd.OnTrailer = u.addTrailer // looptrailer_linux.go
			}
		}
	}
	switch u.resp.Body {
	case phttp.BodyLength:
		n, done := u.ld.Decode(u.buf[u.r:u.w])
		if n > 0 {
			if _, err := w.Write(u.buf[u.r : u.r+n]); err != nil {
				lp.exDone(lc, false, now)
				return
			}
			u.r += n
		}
		if done {
			lp.exDone(lc, true, now)
			return
		}
	case phttp.BodyChunked:
		for {
			n, consumed, err := u.cd.Decode(u.buf[u.r:u.w])
			if n > 0 {
				if _, werr := w.Write(u.buf[u.r : u.r+n]); werr != nil {
					lp.exDone(lc, false, now)
					return
				}
			}
			u.r += consumed
			if err == nil {
				lp.exDone(lc, true, now)
				return
			}
			if err != phttp.ErrNeedMore {
				ex.up.BodyFailed(w) // malformed upstream body
				lp.exDone(lc, false, now)
				return
			}
			if n == 0 && consumed == 0 {
				break
			}
		}
	default: // until close
		if u.w > u.r {
			if _, err := w.Write(u.buf[u.r:u.w]); err != nil {
				lp.exDone(lc, false, now)
				return
			}
			u.r = u.w
		}
	}
	// More body to come. As the goroutine proxy does before each wait
	// on the upstream, send what the client has been given (this
	// commits the head: chunked unless the length is known).
	if w.Written() > 0 {
		w.Flush()
	}
	lp.exDeadline(ex, now, ex.pool.header)
	lp.clientOut(lc, now)
}

// clientOut writes the client's pending output; if it blocks, the
// upstream stops being read until it drains (resumeUp).
func (lp *loop) clientOut(lc *lconn, now int64) {
	if !lc.writing {
		if lp.ring != nil {
			// Sent at the end of the turn; flush pauses the
			// upstream if the client blocks.
			lp.writeSoon(lc, now)
			return
		}
		if lp.write(lc, now) || lc.c == nil {
			return // all written, or the connection closed
		}
	}
	lp.pauseUp(lc)
}

// pauseUp stops reading the upstream while the client's output is blocked.
func (lp *loop) pauseUp(lc *lconn) {
	if u := lc.ex.u; u != nil && !u.paused {
		u.paused = true
		lp.ctl(unix.EPOLL_CTL_MOD, u.fd, 0)
	}
	lc.ex.dl = 0 // the client's Write timeout rules meanwhile
}

// resumeUp reads the upstream again once the client took its output.
func (lp *loop) resumeUp(lc *lconn, now int64) {
	ex := lc.ex
	u := ex.u
	if u == nil || !u.paused {
		return
	}
	u.paused = false
	lp.ctl(unix.EPOLL_CTL_MOD, u.fd, unix.EPOLLIN)
	lp.exDeadline(ex, now, ex.pool.header)
}
