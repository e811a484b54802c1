//go:build linux

package server

import (
	"os"
	"time"

	"github.com/simdedge/simdedge/server/upstream"
	"golang.org/x/sys/unix"
)

// The proxy on the loop (Options.LoopProxy): a request whose plan's action
// is a LoopProxier (plan.go), with its body already buffered, is forwarded
// by the loop itself over a non-blocking upstream connection in the same
// epoll set, as nginx does. The proxy keeps the policy (target choice, head
// rewriting, 502/504 answers, see LoopUpstream); the loop does the I/O.
// This file holds the exchange's life (start, deadline, end);
// loopupattempt_linux.go its attempts, loopuppool_linux.go the upstream
// connections and their pools, loopuprelay_linux.go the bytes:
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

// errUpTimeout is a deadline of an exchange (connect, response head, body
// read); it is a timeout for the proxy's 504 choice.
var errUpTimeout = &upTimeoutError{}

type upTimeoutError struct{}

func (*upTimeoutError) Error() string   { return "server: upstream i/o timeout" }
func (*upTimeoutError) Timeout() bool   { return true }
func (*upTimeoutError) Temporary() bool { return true }
func (*upTimeoutError) Unwrap() error   { return os.ErrDeadlineExceeded }

// noExchange is lconn.ex when no exchange is in flight: read (its zero
// fields say so), never written; proxyStart takes a lexchange of its own.
var noExchange lexchange

// lexchange is a client connection's proxied request in flight.
type lexchange struct {
	active   bool
	up       LoopUpstream
	pool     *lpool
	u        *lupconn
	reqStart int
	// a drives the attempts (upstream.Attempt): the target in flight,
	// the try and total deadlines, what follows a failure. Out of line
	// (the loop's spares, from proxyStart to exDone or closeConn), since
	// Attempts go back to attemptPool past maxSpareAttempts.
	a *upstream.Attempt
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
// the loop by its plan p, or nil.
func (lp *loop) loopProxy(c *conn, p *Plan) LoopUpstream {
	if !lp.proxies || c.req.head.Expect100 {
		return nil
	}
	return p.loopUpstream(&c.req)
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
	ex := lp.spare.getExchange()
	lc.ex = ex
	ex.active, ex.up, ex.reqStart, ex.isHead = true, up, reqStart, string(c.req.head.Method) == "HEAD"
	ex.a = lp.spare.getAttempt()
	// The plan's steps run here, once the response has begun (HSTS and
	// the field edits go on the head the relay writes); one that
	// answers ends the exchange before any attempt.
	if !c.req.plan.runSteps(&c.resp, &c.req) {
		lp.exDone(lc, false, now)
		return
	}
	ex.to = up.LoopTimeouts()
	up.LoopBegin(ex.a, &c.req, lp.waiterFor(lc), time.Duration(now))
	lc.rdl = 0 // the exchange's deadlines rule until it ends
	lp.upSelect(lc, now)
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
	if a := lc.ex.a; a != nil {
		a.Finish()
		lp.spare.putAttempt(a)
		lc.ex.a = nil
	}
}

// exDone ends the exchange: the upstream connection goes back to its pool
// (reusable: the response ended cleanly) or is closed, the response is
// finished, and the connection goes on with its pipelined requests.
func (lp *loop) exDone(lc *lconn, reusable bool, now int64) {
	ex := lc.ex
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
	lc.ex = &noExchange
	lp.spare.putExchange(ex)
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

// noteDeadline makes the next scan come no later than dl.
func (lp *loop) noteDeadline(dl int64) {
	if dl < lp.next {
		lp.next = dl
	}
}
