//go:build linux

package server

import (
	"sync"

	"github.com/simdedge/simdedge/server/upstream"
)

// Idle connections on the loop (docs/decisions/0043-idle-connections.md):
// a connection that waits for its next request with nothing buffered and
// nothing to send gives back its conn, with the conn's read and output
// buffers, and on TLS its ciphertext input buffer; it keeps its lconn
// (descriptor, deadlines, the parked identity) and the epoll registration.
// When epoll says it is readable it takes a conn and buffers again, before
// the read. So an idle plain connection holds about 0.33 KiB of heap
// instead of 7-8 KiB, and nothing changes for a busy one: parking and
// waking copy a few fields and move pointers between lists, without
// allocating once the lists are warm.
//
// Parking waits for the end of the loop's turn (parkIdle), so that no code
// running for the connection during the turn sees its conn go.

// Bounds of a loop's spares: a few for the connections that wake in one
// turn; the rest go to the shared pools, which the GC empties, so that a
// burst of busy connections does not leave memory held for good.
const (
	maxSpareConns = 16
	maxSpareTLSIn = 8
)

// spares are a loop's conns, TLS input buffers and proxy attempts not
// held by a connection. Only the loop's goroutine touches them.
type spares struct {
	conns     []*conn
	tlsIn     [][]byte
	attempts  []*upstream.Attempt
	exchanges []*lexchange
}

// maxSpareAttempts bounds a loop's spare attempts (the rest go to
// attemptPool): one per exchange in flight is taken.
const maxSpareAttempts = 64

var attemptPool = sync.Pool{New: func() any { return new(upstream.Attempt) }}

func (s *spares) getAttempt() *upstream.Attempt {
	if n := len(s.attempts); n > 0 {
		a := s.attempts[n-1]
		s.attempts[n-1] = nil
		s.attempts = s.attempts[:n-1]
		return a
	}
	return attemptPool.Get().(*upstream.Attempt)
}

// putAttempt keeps a, cleared, for the next exchange. Nothing in
// server/upstream keeps a pointer to an Attempt past Finish.
func (s *spares) putAttempt(a *upstream.Attempt) {
	*a = upstream.Attempt{}
	if len(s.attempts) < maxSpareAttempts {
		s.attempts = append(s.attempts, a)
		return
	}
	attemptPool.Put(a)
}

// getExchange returns a cleared lexchange for a proxied request; the loop
// keeps as many as it has had exchanges in flight at once, up to
// maxSpareAttempts, and leaves the rest to the GC.
func (s *spares) getExchange() *lexchange {
	if n := len(s.exchanges); n > 0 {
		ex := s.exchanges[n-1]
		s.exchanges[n-1] = nil
		s.exchanges = s.exchanges[:n-1]
		return ex
	}
	return new(lexchange)
}

func (s *spares) putExchange(ex *lexchange) {
	if ex == &noExchange {
		return
	}
	*ex = lexchange{}
	if len(s.exchanges) < maxSpareAttempts {
		s.exchanges = append(s.exchanges, ex)
	}
}

func (s *spares) getConn() *conn {
	if n := len(s.conns); n > 0 {
		c := s.conns[n-1]
		s.conns[n-1] = nil
		s.conns = s.conns[:n-1]
		return c
	}
	return connPool.Get().(*conn)
}

func (s *spares) putConn(c *conn) {
	if len(s.conns) < maxSpareConns {
		s.conns = append(s.conns, c)
		return
	}
	connPool.Put(c)
}

func (s *spares) getTLSIn() []byte {
	if n := len(s.tlsIn); n > 0 {
		b := s.tlsIn[n-1]
		s.tlsIn[n-1] = nil
		s.tlsIn = s.tlsIn[:n-1]
		return b
	}
	return *tlsInPool.Get().(*[]byte)
}

// putTLSIn keeps b if it has the pool's size; one that grew is left to
// the GC, as loopTLS.release does.
func (s *spares) putTLSIn(b []byte) {
	if len(b) != tlsInBuf {
		return
	}
	if len(s.tlsIn) < maxSpareTLSIn {
		s.tlsIn = append(s.tlsIn, b)
		return
	}
	poolTLSIn(b)
}

// poolTLSIn is apart from putTLSIn because &b moves b to the heap for the
// whole function it is taken in: an allocation on every park otherwise.
func poolTLSIn(b []byte) { tlsInPool.Put(&b) }

// parkable reports whether lc waits for a request with nothing in its
// buffers or in flight, so that its conn may go.
func (lc *lconn) parkable() bool {
	c := lc.c
	if c == nil || lc.parked || c.r != c.w || len(c.out) != 0 || c.file.n != 0 ||
		lc.writing || lc.queued || lc.ex.active || lc.lingering || lc.closeAfter ||
		lc.inHead || lc.body.since != 0 || lc.pp || lc.rd.got {
		return false
	}
	return lc.tls == nil || lc.tls.idle()
}

// idle reports whether the TLS state holds no input (ciphertext in the
// wire, plaintext that crypto/tls may hold) and no output.
func (t *loopTLS) idle() bool {
	w := &t.w
	return !t.more && !t.eof && t.sealed == 0 && w.ir == w.iw && w.skip == 0 && w.opos >= len(w.out) && w.raw == nil
}

// parkSoon queues lc to be parked at the end of the turn, if it is idle
// now (parkIdle looks again).
func (lp *loop) parkSoon(lc *lconn) {
	if !lc.parkq && lc.parkable() {
		lc.parkq = true
		lp.parkq = append(lp.parkq, lc)
	}
}

// parkIdle parks the connections queued this turn that are still idle.
// An lconn closed or handed off since was cleared (putLconn), parkq too,
// and is skipped, even if a new connection has taken it meanwhile and
// queued it again (the later entry then finds parkq false).
func (lp *loop) parkIdle() {
	for i, lc := range lp.parkq {
		lp.parkq[i] = nil
		if !lc.parkq {
			continue
		}
		lc.parkq = false
		if lc.parkable() {
			lp.park(lc)
		}
	}
	lp.parkq = lp.parkq[:0]
}

func (lp *loop) park(lc *lconn) {
	c := lc.c
	o := lp.origin
	if !c.originIs(o) {
		// The loop's first park, or the first after a reload: the
		// loop's idle connections share one connOrigin per settings.
		o = new(connOrigin)
		*o = c.origin()
		lp.origin = o
	}
	c.park(&lc.pk, o)
	lc.c, lc.parked = nil, true
	lp.spare.putConn(c)
	if t := lc.tls; t != nil {
		lp.spare.putTLSIn(t.w.in)
		t.w.in, t.w.ir, t.w.iw = nil, 0, 0
	}
}

// unpark gives a parked connection a conn (and TLS input buffer) again.
func (lp *loop) unpark(lc *lconn) {
	c := lp.spare.getConn()
	c.unpark(&lc.pk)
	lc.c, lc.parked = c, false
	if t := lc.tls; t != nil {
		t.w.in = lp.spare.getTLSIn()
	}
}
