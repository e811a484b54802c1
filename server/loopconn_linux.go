//go:build linux

package server

import (
	"io"
	"net"
	"os"
	"time"

	phttp "github.com/simdedge/simdedge/parse/http"
	"github.com/simdedge/simdedge/server/internal/loopstat"
	"github.com/simdedge/simdedge/server/upstream"
	"golang.org/x/sys/unix"
)

// lconn is the loop's state of one connection around the shared conn
// (buffers, Request, ResponseWriter, serveWith). An idle connection keeps
// only its lconn (and its client address), so it is kept small: the
// bools together at the end, the proxy exchange out of line, what the
// listener gives every connection in a connOrigin (connpark.go);
// TestLconnSize holds it to lconnMax.
type lconn struct {
	c  *conn
	fd int
	st fdStream
	// rdl is the deadline of the wait for input (first request or a
	// partial head: ReadHeader; between requests or in a body: Idle);
	// wdl that of pending output (Write). Loop clock, 0 for none.
	rdl, wdl int64
	// wpos is how much of c.out is written; writing (below): the rest
	// waits for EPOLLOUT (the connection is registered for EPOLLOUT
	// only).
	wpos int
	// body is the wait for the current request's body, if any
	// (loopbody_linux.go).
	body loopBodyWait
	// lingering (below): the response is out and the write side shut
	// down; input is discarded until EOF, lingerLeft more bytes or
	// lingerEnd, the rdl deadline being the nearer of lingerEnd and
	// lingerQuiet from the last input (linger.go).
	lingerEnd  int64
	lingerLeft int
	// ex is the proxied request in flight (loopproxy_linux.go): the
	// connection is not read meanwhile. Out of line, from the loop's
	// spares for the exchange, so that every other connection, an idle
	// one above all, is 136 bytes smaller; &noExchange (never written)
	// when there is none, so that ex.active and ex.u read as before.
	ex *lexchange
	// qwait queues the exchange in its upstream's admission queue
	// (loopqueue_linux.go): made once per lconn, kept when the lconn is
	// reused, since a releasing goroutine may still read its Notify.
	qwait *upstream.Waiter
	// tls is the connection's TLS state when its listener terminates
	// TLS on the loop (looptls_linux.go); nil for plain TCP.
	tls *loopTLS
	// pk holds what the connection keeps while parked (idle, c nil:
	// looppark_linux.go).
	pk parked
	// rd is a read done by the ring for the current event (prefetch).
	rd      ringResult
	writing bool
	// inHead: bytes of a head have arrived and its ReadHeader deadline
	// runs. established: a first head has been parsed; until then the
	// ReadHeader deadline runs from the accept (admit.go).
	inHead      bool
	established bool
	lingering   bool
	// closeAfter: close once c.out is written (error answer, Connection:
	// close, shutdown).
	closeAfter bool
	// inOff: the EPOLLIN registration was dropped because input came
	// during the exchange.
	inOff bool
	// queued: in the loop's flushq, to be sent at the end of the turn
	// (loopring_linux.go).
	queued bool
	// pp: the PROXY header is still to be read (loopproxyproto_linux.go).
	pp bool
	// parked: the connection is idle and c is nil (pk). parkq: in the
	// loop's parkq.
	parked bool
	parkq  bool
}

// maxFreeLconns bounds a loop's list of released lconns.
const maxFreeLconns = 4096

// newLconn takes a released lconn of this loop, or a new one. Released
// lconns stay with their loop (no sync.Pool shared by the loops): a batch
// of ring jobs being finished may still hold a pointer to a connection it
// has just closed and checks lc.c == nil to skip it (sendJobs), which is
// only sound while no other goroutine can take that lconn over.
func (lp *loop) newLconn() *lconn {
	if n := len(lp.free); n > 0 {
		lc := lp.free[n-1]
		lp.free = lp.free[:n-1]
		return lc
	}
	return new(lconn)
}

// putLconn clears lc and keeps it for this loop's next connection.
func (lp *loop) putLconn(lc *lconn) {
	qw := lc.qwait
	*lc = lconn{qwait: qw, ex: &noExchange}
	if len(lp.free) < maxFreeLconns {
		lp.free = append(lp.free, lc)
	}
}

// idle reports that the connection waits for a request with nothing
// buffered or pending: Shutdown closes such connections.
func (lc *lconn) idle() bool {
	if lc.parked {
		return true
	}
	c := lc.c
	return !lc.writing && !lc.ex.active && c.r == c.w && len(c.out) == 0 && c.file.n == 0
}

func (lp *loop) add(h heldConn, now int64) {
	if lp.tlsOpts != nil {
		lp.addTLS(h)
		return
	}
	if lp.register(h, nil, now) != nil {
		lp.count.Add(1)
	}
}

// register makes the loop serve the connection h (t: its TLS state, after
// the handshake), or closes it if epoll refuses it.
func (lp *loop) register(h heldConn, t *loopTLS, now int64) *lconn {
	fd := h.fd
	// As net does for TCP: small responses must not wait for Nagle.
	unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	lc := lp.newLconn()
	*lc = lconn{fd: fd, ex: &noExchange, st: fdStream{fd: fd, remote: sockaddrTCP(h.sa), local: lp.laddr}}
	var st Stream = &lc.st
	if t != nil {
		lc.tls, st = t, t
	}
	lc.pp = t == nil && lp.pol != nil && lp.pol.ProxyProtocol
	lc.c = initConn(lp.spare.getConn(), lp.srv, st)
	lc.c.inLoop = true
	lc.c.home, lc.c.ip, lc.c.ipHeld = lp, h.ip, h.counted
	lc.c.h2c, lc.c.lkey = lp.h2c, lp
	lc.c.paths = lp.srv.pathsFor(lp.outer, lc.c.cfg)
	lc.c.altSvc = lp.srv.altSvcFor(lp.outer)
	lc.c.countOpen(lp.mlst)
	if rh := lc.c.cfg.Timeouts.ReadHeader; rh > 0 {
		lc.rdl = now + int64(rh)
	}
	if err := lp.ctl(unix.EPOLL_CTL_ADD, fd, unix.EPOLLIN); err != nil {
		unix.Close(fd)
		lc.c.release()
		if t != nil {
			t.release()
			lp.count.Add(-1)
		}
		lp.putLconn(lc)
		return nil
	}
	for fd >= len(lp.conns) {
		lp.conns = append(lp.conns, make([]*lconn, len(lp.conns)+64)...)
	}
	lp.conns[fd] = lc
	lp.nconns++
	// Until its first bytes arrive, a new connection needs no conn
	// either (an adopted TLS connection may hold early requests:
	// parkable says).
	lp.parkSoon(lc)
	return lc
}

func (lp *loop) closeConn(lc *lconn) {
	if lc.parked {
		lp.unpark(lc) // release below counts and frees as for any conn
	}
	if u := lc.ex.u; u != nil {
		lp.closeUp(u)
	}
	if lc.ex.active {
		// The attempt in flight ends with the client (its in-flight
		// count and the retry budget's token are released).
		lp.exRelease(lc)
		lp.spare.putExchange(lc.ex)
		lc.ex = &noExchange
	}
	if lc.tls != nil {
		lp.tlsBye(lc)
		lc.tls.release()
	}
	// Closing the descriptor also removes it from the epoll set.
	unix.Close(lc.fd)
	lp.conns[lc.fd] = nil
	lp.nconns--
	lp.count.Add(-1)
	lc.c.dropFile()
	lc.c.release()
	lp.putLconn(lc)
}

func (lp *loop) event(lc *lconn, events uint32, now int64) {
	if lc.parked {
		lp.unpark(lc) // bytes (or a hang-up) arrived
	}
	if lc.rd.got {
		// prefetch read it (under the conditions of the read below).
		lp.read(lc, now)
		return
	}
	if lc.writing {
		if events&(unix.EPOLLOUT|unix.EPOLLERR|unix.EPOLLHUP) != 0 {
			if lp.write(lc, now) {
				if lc.ex.active {
					lp.resumeUp(lc, now)
				} else {
					lp.process(lc, now)
				}
			}
		}
		return
	}
	if lc.ex.active {
		// A proxied request is in flight: input waits (pipelined
		// requests are served in order after it), a hang-up ends it.
		if events&(unix.EPOLLERR|unix.EPOLLHUP) != 0 {
			lp.closeConn(lc)
		} else if !lc.inOff {
			lc.inOff = true
			lp.ctl(unix.EPOLL_CTL_MOD, lc.fd, 0)
		}
		return
	}
	if events&(unix.EPOLLIN|unix.EPOLLERR|unix.EPOLLHUP) != 0 {
		lp.read(lc, now)
	}
}

// read reads once what the connection has and serves it.
func (lp *loop) read(lc *lconn, now int64) {
	c := lc.c
	var n int
	var err error
	if lc.rd.got {
		n, err = lc.rd.take()
	} else {
		n, err = rawRead(lc.fd, lc.recvBuf())
	}
	switch {
	case err == unix.EAGAIN || err == unix.EINTR:
		lp.parkSoon(lc) // woken for nothing
		return
	case err != nil || n <= 0:
		// EOF or reset: as the goroutine engine, a partial request is
		// dropped unanswered.
		lp.closeConn(lc)
		return
	}
	if lc.lingering {
		lp.lingered(lc, n, now)
		return
	}
	if lc.tls != nil {
		lc.tls.w.iw += n
		lc.tls.more = true
		if lc.tls.w.iw == len(lc.tls.w.in) && len(lc.tls.w.in) >= tlsInMax {
			lp.closeConn(lc) // errTLSInputFull
			return
		}
	} else {
		c.w += n
		if lc.pp && !lp.proxyHeader(lc) {
			return // incomplete or closed (loopproxyproto_linux.go)
		}
	}
	lp.process(lc, now)
}

// process serves the complete requests in the read buffer, stopping at a
// partial one, at a request that must be handed off, at an answer that
// closes the connection, or when enough output is pending; then it writes.
func (lp *loop) process(lc *lconn, now int64) {
	c := lc.c
	for {
		if lc.tls != nil && !lp.tlsFill(lc) {
			return // closed
		}
		if !lp.serveBuffered(lc, now) {
			return // handed off or closed
		}
		if lc.tls != nil && lp.tlsMore(lc) {
			continue
		}
		if len(c.out) < flushThreshold && c.file.n == 0 {
			// The turn's outputs go out together (writeSoon); a
			// file body (sendfile) is sent now, after its head.
			lp.writeSoon(lc, now)
			return
		}
		if !lp.write(lc, now) {
			return
		}
		// The batch was cut at flushThreshold and went out whole:
		// serve the requests still buffered.
	}
}

// serveBuffered answers the complete requests in rbuf[r:w] into c.out. It
// reports false if the connection was handed off or closed.
func (lp *loop) serveBuffered(lc *lconn, now int64) bool {
	c := lc.c
	for len(c.out) < flushThreshold && c.r < c.w && !lc.closeAfter && !lc.ex.active && c.file.n == 0 {
		n, err := c.req.parseHead(c.cfg.parser, c.rbuf[c.r:c.w], c.paths)
		if err == phttp.ErrNeedMore {
			lp.needHead(lc, now)
			break
		}
		if err != nil {
			if !lc.established && c.h2Start() {
				// HTTP/2 runs on the goroutine path (h2serve.go).
				lp.handoff(lc)
				return false
			}
			if status := phttp.StatusFor(err); status != 0 && (lc.established || !c.h2Silent(err)) {
				c.writeError(status)
			}
			lc.closeAfter = true
			break
		}
		lc.inHead, lc.established = false, true
		if c.lst != nil || c.alog != nil {
			// The loop's clock of this event is the request's begin
			// (metrics.go): one clock read less per request.
			c.evBegin = lp.base.Add(time.Duration(now))
		}
		h, up, need := lp.route(c, n)
		if need > 0 {
			lp.needBody(lc, need, now)
			break
		}
		lc.body.since = 0
		if up != nil {
			lp.proxyStart(lc, n, up, now)
			if lc.c == nil {
				return false // closed
			}
			break
		}
		if h == nil {
			lp.handoff(lc)
			return false
		}
		keep, ok := lp.serve(lc, n, h)
		if !ok {
			lp.closeConn(lc) // the handler panicked
			return false
		}
		if !keep {
			lc.closeAfter = true
			break
		}
		if c.r == c.w {
			// Everything received is answered: wait for the next
			// request, under the Idle timeout.
			poison(c.rbuf[:c.w])
			c.r, c.w = 0, 0
			lc.rdl = 0
			if d := c.cfg.Timeouts.Idle; d > 0 {
				lc.rdl = now + int64(d)
			}
		}
	}
	return true
}

// route decides how the request whose head (n bytes) was just parsed is
// served: by h on the loop, by handing the connection off (h nil), or
// later, once need bytes from rbuf[r:] are buffered.
func (lp *loop) route(c *conn, n int) (h Handler, up LoopUpstream, need int) {
	head := &c.req.head
	switch head.Body {
	case phttp.BodyNone:
	case phttp.BodyLength:
		if max := c.cfg.Limits.MaxBodyBytes; max > 0 && head.ContentLength > max {
			return lp.srv.opts.Handler, nil, 0 // serveWith answers 413
		}
		if int64(c.w-c.r-n) < head.ContentLength {
			if head.Expect100 || head.ContentLength > loopBodyMax {
				return nil, nil, 0
			}
			return nil, nil, n + int(head.ContentLength)
		}
	default:
		// Chunked: its decoder reads from the stream as it goes.
		return nil, nil, 0
	}
	// The route is looked up once here (plan.go); a hand-off carries it
	// to the goroutine, the loop's proxy runs its steps.
	p := c.req.planFor(lp.srv.router)
	if h := p.inline(&c.req); h != nil {
		return h, nil, 0
	}
	return nil, lp.loopProxy(c, p), 0
}

// serve runs h inline; ok is false if it panicked (the connection then
// closes, as on the goroutine engine).
func (lp *loop) serve(lc *lconn, n int, h Handler) (keep, ok bool) {
	defer func() {
		if p := recover(); p != nil {
			lp.srv.opts.Logger.Error("handler panic; connection closed", "panic", p, "remote", lc.st.remote)
			keep, ok = false, false
		}
	}()
	return lc.c.serveWith(n, h), true
}

// needHead makes room for the rest of a partial head and starts its
// ReadHeader deadline.
func (lp *loop) needHead(lc *lconn, now int64) {
	c := lc.c
	lp.compact(c)
	if c.w == len(c.rbuf) {
		// The parser reports ErrHeaderTooLarge once it sees
		// MaxHeaderBytes, so the buffer never grows beyond that.
		c.grow(min(2*len(c.rbuf), c.cfg.Limits.MaxHeaderBytes))
	}
	if !lc.inHead {
		lc.inHead = true
		// A first head keeps the deadline set at the accept.
		if rh := c.cfg.Timeouts.ReadHeader; rh > 0 && lc.established {
			lc.rdl = now + int64(rh)
		}
	}
}

// needBody makes room for more of the need bytes from rbuf[r:] (a head and
// its small body) and waits for them under the Idle timeout, as body reads
// do. The buffer grows as bytes arrive (nextBodyRoom), not to need at once:
// an announced length is only a claim.
func (lp *loop) needBody(lc *lconn, need int, now int64) {
	c := lc.c
	lp.compact(c)
	if c.w == len(c.rbuf) {
		c.grow(nextBodyRoom(len(c.rbuf), need))
	}
	lc.rdl = lp.bodyDeadline(lc, int64(c.w-need)+c.req.head.ContentLength, now)
}

// compact moves the unanswered bytes to the start of rbuf.
func (lp *loop) compact(c *conn) {
	if c.r > 0 {
		poison(c.rbuf[:c.r])
		c.w = copy(c.rbuf, c.rbuf[c.r:c.w])
		c.r = 0
	}
}

// write sends the pending responses without blocking. It reports whether
// the connection is still open with nothing pending.
func (lp *loop) write(lc *lconn, now int64) bool {
	c := lc.c
	for lc.wpos < len(c.out) {
		p := lc.outBytes()
		if len(p) == 0 {
			lp.closeConn(lc) // TLS: sealing failed
			return false
		}
		n, err := rawWrite(lc.fd, p)
		if err == unix.EINTR {
			continue
		}
		if err == unix.EAGAIN {
			if !lc.writing {
				lc.writing = true
				lp.ctl(unix.EPOLL_CTL_MOD, lc.fd, unix.EPOLLOUT)
				if d := c.cfg.Timeouts.Write; d > 0 {
					lc.wdl = now + int64(d)
				}
			}
			return false
		}
		if err != nil || n < 0 {
			lp.closeConn(lc)
			return false
		}
		lc.wrote(n)
		if lc.writing {
			// Progress: the Write timeout bounds each write, as on
			// the goroutine engine.
			if d := c.cfg.Timeouts.Write; d > 0 {
				lc.wdl = now + int64(d)
			}
		}
	}
	c.out = c.out[:0]
	lc.wpos = 0
	if lc.tls != nil {
		lc.tls.sealed = 0
	}
	if c.file.n > 0 && !lp.sendFileOut(lc, now) {
		return false // waits for EPOLLOUT, or closed
	}
	if lc.closeAfter {
		lp.finish(lc, now)
		return false
	}
	if lc.writing {
		lc.writing = false
		lc.wdl = 0
		lp.ctl(unix.EPOLL_CTL_MOD, lc.fd, unix.EPOLLIN)
	}
	lp.parkSoon(lc)
	return true
}

// handoff moves the connection to the goroutine engine for the rest of
// its life: its buffered bytes (the current request onwards) and any
// responses not yet written go with it, in order.
func (lp *loop) handoff(lc *lconn) {
	loopstat.Handoffs.Add(1)
	c, fd := lc.c, lc.fd
	s := lp.srv
	lp.conns[fd] = nil
	lp.nconns--
	lp.ctl(unix.EPOLL_CTL_DEL, fd, 0)
	t := lc.tls
	if t != nil {
		// Sealed ciphertext not yet sent stays in the wire, which
		// sends it before anything else.
		c.out = c.out[:copy(c.out, c.out[t.sealed:])]
		t.sealed = 0
	} else if lc.wpos > 0 {
		c.out = c.out[:copy(c.out, c.out[lc.wpos:])]
	}
	lp.putLconn(lc)
	// net.FileConn duplicates the descriptor into Go's netpoller; the
	// loop's copy is closed.
	f := os.NewFile(uintptr(fd), "")
	nc, err := net.FileConn(f)
	f.Close()
	if err != nil {
		s.opts.Logger.Warn("event loop: hand-off failed; connection closed", "err", err)
		c.release()
		lp.count.Add(-1)
		return
	}
	if t != nil {
		t.w.raw = nc
		c.st = t
	} else {
		c.st = nc
	}
	c.inLoop = false
	c.readDL, c.writeDL = time.Time{}, time.Time{}
	c.canPark = streamParks(c.st)
	s.addConn(c)
	c.done = func(c *conn) {
		s.removeConn(c)
		lp.connGone()
	}
	go c.run(true)
}

// fdStream is the Stream of a connection the loop serves: the descriptor
// is non-blocking and owned by the loop, which reads and writes it itself.
// Read and Write exist for the Stream contract and never block; Close and
// the deadlines are the loop's business and do nothing here.
type fdStream struct {
	fd            int
	remote, local net.Addr
}

func (f *fdStream) Read(p []byte) (int, error) {
	n, err := unix.Read(f.fd, p)
	if err != nil {
		return 0, err
	}
	if n == 0 && len(p) > 0 {
		return 0, io.EOF
	}
	return n, nil
}

func (f *fdStream) Write(p []byte) (int, error) {
	n, err := unix.Write(f.fd, p)
	if n < 0 {
		n = 0
	}
	return n, err
}

func (f *fdStream) Close() error                     { return nil }
func (f *fdStream) SetReadDeadline(time.Time) error  { return nil }
func (f *fdStream) SetWriteDeadline(time.Time) error { return nil }
func (f *fdStream) RemoteAddr() net.Addr             { return f.remote }
func (f *fdStream) LocalAddr() net.Addr              { return f.local }
