//go:build linux

package server

import (
	"errors"
	"io"
	"net/netip"
	"os"
	"time"

	phttp "github.com/simdedge/simdedge/parse/http"
	"github.com/simdedge/simdedge/server/internal/rbuf"
	"github.com/simdedge/simdedge/server/upstream"
	"golang.org/x/sys/unix"
)

// The proxy on the loop (Options.LoopProxy): a request whose handler is a
// LoopProxier, with its body already buffered, is forwarded by the loop
// itself over a non-blocking upstream connection in the same epoll set, as
// nginx does. The proxy keeps the policy (target choice, head rewriting,
// 502/504 answers, see LoopUpstream); the loop does the I/O:
//
//   - upstream keep-alive connections are kept per loop and per target
//     (lpool, a LIFO stack), registered for EPOLLIN while idle so that an
//     upstream closing one is noticed (and the connection dropped) without
//     a system call per request;
//   - the request goes out in one write; the loop then waits for EPOLLIN
//     (no speculative read that would return EAGAIN);
//   - the response head is parsed by the proxy (parse/http's response
//     parser), then the body is relayed as it arrives through the
//     connection's ResponseWriter and written to the client after each
//     upstream read. While the client's output is blocked (EPOLLOUT), the
//     upstream connection is registered for nothing, so at most one
//     upstream read is buffered: back-pressure with bounded memory;
//   - connect, response-header and per-read body timeouts are the
//     exchange's deadline on the loop's clock, checked by the scan;
//   - the attempts are driven by upstream.Attempt, as on every proxy
//     path: the loop asks it for a target (upSelect), and tells it what
//     happened (attemptFailed, the head in upRelay); it says what comes
//     next (resend on a new connection, fail over, retry after a
//     backoff on the loop's clock, or the answer).
//
// While an exchange runs, the client connection is not read: pipelined
// requests wait in the read buffer (or the kernel's) and are served in
// order once the response is complete.

const (
	// upReadBuf is an upstream connection's read buffer, the goroutine
	// proxy's size; it bounds what one upstream read adds to the client's
	// pending output.
	upReadBuf = 16 << 10
)

// errUpTimeout is a deadline of an exchange (connect, response head, body
// read); it is a timeout for the proxy's 504 choice.
var errUpTimeout = &upTimeoutError{}

type upTimeoutError struct{}

func (*upTimeoutError) Error() string   { return "server: upstream i/o timeout" }
func (*upTimeoutError) Timeout() bool   { return true }
func (*upTimeoutError) Temporary() bool { return true }
func (*upTimeoutError) Unwrap() error   { return os.ErrDeadlineExceeded }

// lpool holds the idle upstream connections of one target on one loop.
type lpool struct {
	// key is the policy's target: it outlives reloads that keep its
	// address, and says whether its connections may be reused
	// (Reusable: not ejected, failing checks or retired).
	key     *upstream.Target
	sa      unix.Sockaddr
	family  int
	connect int64 // timeouts, ns
	header  int64
	idleTO  int64
	maxIdle int
	idle    []*lupconn
	// downs is key.Downs() when the idle connections were pooled: if
	// it moved, the target went down since and they are not reused.
	downs uint64
	// open counts the pool's connections, idle or in an exchange: a
	// pool is forgotten only when it has none.
	open int
}

// lupconn is one non-blocking upstream connection of a loop.
type lupconn struct {
	fd   int
	pool *lpool
	buf  []byte // response bytes: buf[r:w] unconsumed
	r, w int
	out  []byte // the request being sent: out[wpos:] is left
	wpos int
	// lc is the client connection whose exchange uses it; nil while
	// pooled.
	lc *lconn
	// fresh: connected for this exchange. connecting: waits for the
	// connect to complete; outReg: registered for EPOLLOUT (connecting,
	// or the request waits to be written); paused: registered for
	// nothing (back-pressure).
	fresh, connecting, outReg, paused bool
	idleSince                         int64
	// queued: in the loop's flushq (loopring_linux.go); rd: a read the
	// ring did for the current event.
	queued bool
	rd     ringResult
	resp   phttp.Response
	ld     phttp.LengthDecoder
	cd     phttp.ChunkedDecoder
}

// lexchange is a client connection's proxied request in flight.
type lexchange struct {
	active   bool
	up       LoopUpstream
	pool     *lpool
	u        *lupconn
	reqStart int
	// a drives the attempts (upstream.Attempt): the target in flight,
	// the try and total deadlines, what follows a failure.
	a upstream.Attempt
	// stale: the attempt's pooled connection was found closed, so the
	// resend takes a new one (upstream.StepResend).
	stale   bool
	isHead  bool
	gotHead bool
	// dl is the exchange's deadline (loop clock, 0 none): connect,
	// response head (bounded by tryDL), body read, or the end of a
	// retry's backoff.
	dl int64
	// attemptAt is when the attempt began (loop clock), for the
	// target's response-time histogram.
	attemptAt int64
	// tryDL is the attempt's deadline up to its response head (loop
	// clock); to are the upstream's timeouts.
	tryDL int64
	to    LoopTimeouts
	// backoff: waiting for dl before the next attempt.
	backoff bool
	// queued: in the admission queue (lconn.qwait) since every target
	// is at its cap, until queueDL (loopqueue_linux.go).
	queued  bool
	queueDL int64
}

// loopProxy returns the upstream the request just parsed is proxied to on
// the loop, or nil.
func (lp *loop) loopProxy(c *conn) LoopUpstream {
	if lp.lpx == nil || c.req.head.Expect100 {
		return nil
	}
	return lp.lpx.LoopProxy(&c.req)
}

// poolFor returns the loop's pool of connections to key, made on first
// use (the target's address is parsed then: the proxy lets the loop drive
// only upstreams whose targets are IP addresses).
func (lp *loop) poolFor(key *upstream.Target, to *LoopTimeouts) (*lpool, bool) {
	if pl := lp.pools[key]; pl != nil {
		return pl, true
	}
	addr, err := netip.ParseAddrPort(key.Address())
	if err != nil {
		return nil, false
	}
	pl := &lpool{key: key}
	a := addr.Addr().Unmap()
	switch {
	case a.Is4():
		pl.sa, pl.family = &unix.SockaddrInet4{Port: int(addr.Port()), Addr: a.As4()}, unix.AF_INET
	case a.Is6():
		pl.sa, pl.family = &unix.SockaddrInet6{Port: int(addr.Port()), Addr: a.As16()}, unix.AF_INET6
	default:
		return nil, false
	}
	pl.connect, pl.header, pl.idleTO, pl.maxIdle = int64(to.Connect), int64(to.Header), int64(to.Idle), to.MaxIdle
	if lp.pools == nil {
		lp.pools = make(map[*upstream.Target]*lpool)
	}
	lp.pools[key] = pl
	return pl, true
}

// proxyStart begins the exchange of the request whose head (n bytes) was
// just parsed; its body is buffered.
func (lp *loop) proxyStart(lc *lconn, n int, up LoopUpstream, now int64) {
	defer lp.exPanic(lc)
	c := lc.c
	reqStart, ok := c.startRequest(n)
	if !ok {
		lc.closeAfter = true
		return
	}
	ex := &lc.ex
	ex.active, ex.up, ex.reqStart, ex.isHead = true, up, reqStart, string(c.req.head.Method) == "HEAD"
	ex.to = up.LoopTimeouts()
	up.LoopBegin(&ex.a, &c.req, lp.waiterFor(lc), time.Duration(now))
	lc.rdl = 0 // the exchange's deadlines rule until it ends
	lp.upSelect(lc, now)
}

// upSelect selects the target of the exchange's next attempt (the
// driver's Next) and starts it.
func (lp *loop) upSelect(lc *lconn, now int64) {
	ex := &lc.ex
	switch ex.a.Next(time.Duration(now)) {
	case upstream.StepWait:
		// Every target at its cap: wait for a slot (Notify wakes
		// the loop) until queue.timeout.
		ex.queued = true
		if ex.queueDL == 0 {
			ex.queueDL = now + int64(ex.to.Queue)
		}
		ex.dl = ex.queueDL
		lp.noteDeadline(ex.dl)
		return
	case upstream.StepAnswer:
		lp.exAnswer(lc, now)
		return
	}
	t := ex.a.Target()
	lc.c.req.SetUpstream(ex.a.Pool().Name(), t.Address())
	ex.stale = false
	ex.tryDL = now + int64(ex.a.Left())
	pl, ok := lp.poolFor(t, &ex.to)
	if !ok {
		lp.attemptFailed(lc, upstream.Failure{Err: errBadTarget, Kind: upstream.Refused, Fresh: true}, now)
		return
	}
	ex.pool = pl
	lp.upBegin(lc, now)
}

// exDeadline sets the exchange's deadline d from now, bounded by the
// attempt's try deadline while no response head arrived.
func (lp *loop) exDeadline(ex *lexchange, now, d int64) {
	ex.dl = now + d
	if !ex.gotHead && ex.tryDL != 0 && ex.tryDL < ex.dl {
		ex.dl = ex.tryDL
	}
	lp.noteDeadline(ex.dl)
}

// attemptFailed tells the driver that the attempt failed before a
// response head was relayed, and does what it says: resend on a new
// connection, fail over to another target at once, retry after a
// backoff, or answer.
func (lp *loop) attemptFailed(lc *lconn, f upstream.Failure, now int64) {
	ex := &lc.ex
	if u := ex.u; u != nil {
		u.lc, ex.u = nil, nil
		lp.closeUp(u)
	}
	ex.gotHead = false
	switch ex.a.Failed(time.Duration(now), f) {
	case upstream.StepResend:
		ex.stale = true
		lp.upBegin(lc, now)
	case upstream.StepFailover:
		lp.upSelect(lc, now)
	case upstream.StepRetry:
		lp.backoffWait(lc, now)
	default:
		lp.exAnswer(lc, now)
	}
}

// backoffWait waits for the driver's backoff before the next attempt.
func (lp *loop) backoffWait(lc *lconn, now int64) {
	ex := &lc.ex
	ex.backoff, ex.tryDL = true, 0
	ex.dl = now + int64(ex.a.Backoff())
	lp.noteDeadline(ex.dl)
}

// exAnswer answers as the driver says after the attempts ended without a
// response to relay, and ends the exchange.
func (lp *loop) exAnswer(lc *lconn, now int64) {
	lc.ex.up.Answer(&lc.c.resp, &lc.ex.a)
	lp.exDone(lc, false, now)
}

var errBadTarget = errors.New("server: upstream target is not an IP address")

// upBegin takes a pooled connection or connects a new one and sends the
// request.
func (lp *loop) upBegin(lc *lconn, now int64) {
	ex := &lc.ex
	ex.attemptAt = now
	u, err := lp.upGet(ex.pool, now, ex.stale)
	if err != nil {
		lp.attemptFailed(lc, upstream.Failure{Err: err, Kind: upstream.Classify(err, true), Fresh: true}, now)
		return
	}
	u.lc, ex.u = lc, u
	out, ok := ex.up.AppendRequest(u.out[:0], &lc.c.resp, &lc.c.req)
	u.out, u.wpos = out, 0
	if !ok {
		lp.exDone(lc, true, now)
		return
	}
	if u.connecting {
		lp.exDeadline(ex, now, ex.pool.connect)
		return
	}
	lp.upSendSoon(lc, now)
}

// upGet returns an idle pooled connection or a new one (connecting);
// fresh: a new one.
func (lp *loop) upGet(pl *lpool, now int64, fresh bool) (*lupconn, error) {
	if len(pl.idle) > 0 && (!pl.key.Reusable() || pl.key.Downs() != pl.downs) {
		// Ejected, failing checks or retired since they were pooled
		// (perhaps back by now): the connections are not reused.
		lp.closeIdle(pl)
	}
	for n := len(pl.idle); n > 0 && !fresh; n = len(pl.idle) {
		u := pl.idle[n-1]
		pl.idle[n-1] = nil
		pl.idle = pl.idle[:n-1]
		if pl.idleTO > 0 && now-u.idleSince > pl.idleTO {
			lp.closeUp(u)
			continue
		}
		u.fresh = false
		return u, nil
	}
	fd, err := unix.Socket(pl.family, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, os.NewSyscallError("socket", err)
	}
	unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	err = unix.Connect(fd, pl.sa)
	connecting := err == unix.EINPROGRESS
	if err != nil && !connecting {
		unix.Close(fd)
		return nil, os.NewSyscallError("connect", err)
	}
	ev := uint32(unix.EPOLLIN)
	if connecting {
		ev = unix.EPOLLOUT
	}
	if err := lp.ctl(unix.EPOLL_CTL_ADD, fd, ev); err != nil {
		unix.Close(fd)
		return nil, err
	}
	u := &lupconn{fd: fd, pool: pl, buf: make([]byte, upReadBuf), fresh: true, connecting: connecting, outReg: connecting}
	pl.open++
	for fd >= len(lp.ups) {
		lp.ups = append(lp.ups, make([]*lupconn, len(lp.ups)+64)...)
	}
	lp.ups[fd] = u
	return u, nil
}

// upSend writes the rest of the request; once it is out, the exchange
// waits for the response head.
func (lp *loop) upSend(lc *lconn, now int64) {
	ex := &lc.ex
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

// exPanic contains a panic of the proxy's code (LoopUpstream) during an
// exchange, as the goroutine engine contains a handler's: the client
// connection and its upstream connection close, the loop goes on.
func (lp *loop) exPanic(lc *lconn) {
	if p := recover(); p != nil {
		lp.srv.opts.Logger.Error("proxy panic on the event loop; connection closed", "panic", p)
		if lc.c != nil {
			lp.closeConn(lc)
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
	ex := &lc.ex
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
	ex := &lc.ex
	u := ex.u
	if u == nil || !u.paused {
		return
	}
	u.paused = false
	lp.ctl(unix.EPOLL_CTL_MOD, u.fd, unix.EPOLLIN)
	lp.exDeadline(ex, now, ex.pool.header)
}

// upFailed handles an upstream error (or timeout) of an exchange.
func (lp *loop) upFailed(lc *lconn, err error, now int64) {
	ex := &lc.ex
	u := ex.u
	w := &lc.c.resp
	if !ex.gotHead {
		f := upstream.Failure{Err: err, Fresh: true}
		connecting := false
		if u != nil {
			f.Written, f.Read, f.Fresh, connecting = u.wpos > 0, u.w > 0, u.fresh, u.connecting
		}
		f.Kind = upstream.Classify(err, connecting)
		lp.attemptFailed(lc, f, now)
		return
	}
	if u.resp.Body == phttp.BodyUntilClose && err == io.EOF {
		lp.exDone(lc, false, now) // complete, but the connection is spent
		return
	}
	ex.up.BodyFailed(w)
	lp.exDone(lc, false, now)
}

// exTimeout ends an exchange whose deadline passed.
func (lp *loop) exTimeout(lc *lconn, now int64) {
	lc.ex.dl = 0
	if lc.ex.queued {
		lc.ex.queued = false
		lc.ex.a.QueueExpired()
		lp.exAnswer(lc, now)
		return
	}
	if lc.ex.backoff {
		lc.ex.backoff = false
		lp.upSelect(lc, now)
		return
	}
	lp.upFailed(lc, errUpTimeout, now)
}

// exRelease ends the exchange's attempt in flight and its retry
// bookkeeping (the driver's Finish): the response ended, or the client
// went away.
func (lp *loop) exRelease(lc *lconn) {
	lp.unqueue(lc)
	lc.ex.a.Finish()
}

// exDone ends the exchange: the upstream connection goes back to its pool
// (reusable: the response ended cleanly) or is closed, the response is
// finished, and the connection goes on with its pipelined requests.
func (lp *loop) exDone(lc *lconn, reusable bool, now int64) {
	ex := &lc.ex
	c := lc.c
	if u := ex.u; u != nil {
		u.lc = nil
		if reusable && !u.resp.Close && u.r == u.w && !u.connecting && !u.outReg && !lp.srv.closing.Load() {
			lp.putUp(u, now)
		} else {
			lp.closeUp(u)
		}
	}
	reqStart := ex.reqStart
	lp.exRelease(lc)
	*ex = lexchange{}
	if !c.req.body.done {
		c.finishBody() // buffered: never reads
	}
	keep := c.endRequest(reqStart)
	if lc.inOff {
		lc.inOff = false
		if !lc.writing {
			lp.ctl(unix.EPOLL_CTL_MOD, lc.fd, unix.EPOLLIN)
		}
	}
	switch {
	case !keep:
		lc.closeAfter = true
	case c.r == c.w:
		poison(c.rbuf[:c.w])
		c.r, c.w = 0, 0
		if d := c.cfg.Timeouts.Idle; d > 0 {
			lc.rdl = now + int64(d)
		}
	}
	if !lc.writing {
		lp.process(lc, now)
	}
}

func (lp *loop) putUp(u *lupconn, now int64) {
	pl := u.pool
	if len(pl.idle) >= pl.maxIdle {
		lp.closeUp(u)
		return
	}
	u.r, u.w, u.wpos = 0, 0, 0
	u.rd, u.queued = ringResult{}, false // none left by the exchange; cleared for certain
	u.out = u.out[:0]
	u.idleSince = now
	if u.paused {
		u.paused = false
		lp.ctl(unix.EPOLL_CTL_MOD, u.fd, unix.EPOLLIN)
	}
	if cap(u.buf) > maxPooledBuf {
		u.buf = make([]byte, upReadBuf)
	}
	if len(pl.idle) == 0 {
		pl.downs = pl.key.Downs()
	}
	pl.idle = append(pl.idle, u)
}

// dropIdle closes a pooled connection the upstream closed.
func (lp *loop) dropIdle(u *lupconn) {
	pl := u.pool
	for i, x := range pl.idle {
		if x == u {
			pl.idle = append(pl.idle[:i], pl.idle[i+1:]...)
			pl.idle[:cap(pl.idle)][len(pl.idle)] = nil
			break
		}
	}
	lp.closeUp(u)
}

func (lp *loop) closeUp(u *lupconn) {
	if u.fd < 0 {
		return // closed already
	}
	// Closing the descriptor also removes it from the epoll set.
	unix.Close(u.fd)
	if u.fd < len(lp.ups) && lp.ups[u.fd] == u {
		lp.ups[u.fd] = nil
	}
	u.fd = -1
	u.pool.open--
	u.lc = nil
}

// sweepPools closes the pooled connections idle longer than their idle
// timeout and forgets pools without connections: the targets of an upstream replaced by
// a reload are never asked for again, so their connections would
// otherwise stay open until the upstream closed them. It runs with the
// deadline scan.
func (lp *loop) sweepPools(now int64) {
	for key, pl := range lp.pools {
		// LIFO: the oldest connections are at the bottom.
		n := 0
		for n < len(pl.idle) && pl.idleTO > 0 && now-pl.idle[n].idleSince > pl.idleTO {
			lp.closeUp(pl.idle[n])
			n++
		}
		if n > 0 {
			rest := copy(pl.idle, pl.idle[n:])
			clear(pl.idle[rest:])
			pl.idle = pl.idle[:rest]
		}
		if len(pl.idle) > 0 && !pl.key.Reusable() {
			lp.closeIdle(pl) // ejected, failing checks or retired
		}
		if pl.open == 0 {
			delete(lp.pools, key)
		}
	}
}

// closeIdle closes a pool's idle connections.
func (lp *loop) closeIdle(pl *lpool) {
	for i, u := range pl.idle {
		lp.closeUp(u)
		pl.idle[i] = nil
	}
	pl.idle = pl.idle[:0]
}

// closeUps closes every upstream connection (the loop ends).
func (lp *loop) closeUps() {
	for _, u := range lp.ups {
		if u != nil {
			lp.closeUp(u)
		}
	}
	for _, pl := range lp.pools {
		pl.idle = nil
	}
}

// noteDeadline makes the next scan come no later than dl.
func (lp *loop) noteDeadline(dl int64) {
	if dl < lp.next {
		lp.next = dl
	}
}
