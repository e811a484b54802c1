package server

import (
	"errors"
	"io"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	phttp "github.com/simdedge/simdedge/parse/http"
	"github.com/simdedge/simdedge/server/accesslog"
	"github.com/simdedge/simdedge/server/metrics"
	"github.com/simdedge/simdedge/server/pathnorm"
)

// Buffer sizes of a stream connection.
const (
	// initialReadBuf fits the heads of nearly all requests (browsers send
	// 0.5-2 KiB) and a few pipelined ones; the buffer grows up to the head
	// limit only for a connection that needs it.
	initialReadBuf = 4 << 10
	// flushThreshold is the amount of pending response bytes at which the
	// loop writes them out even though more pipelined requests wait: big
	// enough to batch many small responses into one write, small enough
	// to bound a connection's memory.
	flushThreshold = 64 << 10
	// maxDrainBody is how many unread request-body bytes the server reads
	// and discards to keep a connection alive after the handler returns;
	// a larger remainder closes the connection instead.
	maxDrainBody = 256 << 10
	// maxPooledBuf: buffers that grew beyond this are left to the GC
	// instead of being pooled, so one huge request does not pin memory.
	maxPooledBuf = 128 << 10
)

// Connection states seen by Shutdown and by reclaimIdle. The low bits of
// conn.state hold the state; an idle connection's word also holds when its
// wait began (Unix milliseconds, shifted up by stateBits), so that
// reclaimIdle can pick the longest idle and its compare-and-swap fails if
// the connection has moved on since. One atomic store per request, as
// before.
const (
	stateActive int64 = iota
	stateIdle         // waiting for the first byte of a next request
	stateWoken        // Shutdown or reclaimIdle interrupted the idle read
	stateFresh        // waiting for the first byte of the first request

	stateBits = 2
	stateMask = 1<<stateBits - 1
)

// idleWord is the state word of a connection idle since t, waiting for its
// first request if first.
func idleWord(t time.Time, first bool) int64 {
	if first {
		return t.UnixMilli()<<stateBits | stateFresh
	}
	return t.UnixMilli()<<stateBits | stateIdle
}

// waiting reports whether the state word w is one of an idle wait.
func waiting(w int64) bool { return w&stateMask == stateIdle || w&stateMask == stateFresh }

var errShutdown = errors.New("server: shutting down")

// conn is one stream connection and everything it reuses from request to
// request: read buffer, output buffer, Request and ResponseWriter. Only its
// own goroutine touches it, except state and st.SetReadDeadline (Shutdown).
type conn struct {
	srv *Server
	st  Stream
	// cfg are the limits and timeouts the connection was accepted under
	// (reconfigure.go): read without synchronization on every request.
	cfg *settings
	// home is what the connection's MaxConns slot belongs to (a
	// ServeStream call's slots, or the event loop that accepted it), so
	// that a full Serve call reclaims only its own idle connections.
	home any
	// ip is the client's address as counted for MaxConnsPerIP; ipHeld:
	// counted, to be given back on release.
	ip     netip.Addr
	ipHeld bool
	// errSent: an error answer was queued (writeError); closing then
	// lingers (linger.go) so that the client can read it.
	errSent bool

	// rbuf[r:w] holds received bytes not yet consumed: the rest of the
	// current request's body, then pipelined requests.
	rbuf []byte
	r, w int
	// out holds finished responses not yet written: the responses to a
	// batch of pipelined requests go out in one Write.
	out []byte

	req  Request
	resp ResponseWriter

	state atomic.Int64
	// readDL is the read deadline last set; setReadDeadline skips
	// updates that would move it by less than a quarter of the timeout.
	readDL time.Time
	// writeDL is the write deadline last set, moved lazily the same way.
	writeDL time.Time
	// now is the time taken once per request, when its handler returned:
	// time.Now costs 50-150 ns on virtual machines without a vDSO clock
	// (half of a static response's server time, measured on the 2-core
	// development VM, Go 1.26), so the Date field, the lazy write deadline
	// and the next idle deadline share it.
	now time.Time
	// sent100 records that "100 Continue" went out for this request.
	sent100 bool
	// broken: the stream failed or the body framing is unrecoverable;
	// the connection closes after the current response.
	broken bool
	// file is a file body the event loop sends with sendfile(2) once
	// out is written (sendfile.go, loopsendfile_linux.go).
	file fileOut
	// watch is the background read that watches the client while a
	// handler runs (clientgone.go); hijacked: a handler took the stream
	// (hijack.go), which the connection then leaves open.
	watch    *clientWatch
	hijacked bool
	// inLoop: an event loop serves the connection (loop_linux.go). It
	// writes out itself, without blocking, after a batch of requests, so
	// flushOut only buffers.
	inLoop bool
	// lst and shard are the listener counters and the shard the
	// connection counts into, and reqBegin when its current request's
	// head was complete (only with Options.Metrics; metrics.go).
	lst      *metrics.Listener
	shard    int
	reqBegin time.Time
	// h2c: the listener takes h2c with prior knowledge; lkey is its key
	// for StopListener's GOAWAY (h2serve.go).
	h2c  bool
	lkey any
	// paths is the connection's path normalisation: its listener's
	// (Server.SetListenerPaths) or cfg's (paths.go).
	paths *pathnorm.Options
	// altSvc is the Alt-Svc value its responses carry (altsvc.go).
	altSvc string
	// alog is the access-log shard the connection writes to (nil: no
	// access log; observe.go).
	alog *accesslog.Shard
	// evBegin, set by the event loop before a request starts, is the
	// time of the event that completed its head: beginCount takes it
	// instead of reading the clock (zero: read it).
	evBegin time.Time
	// done ends the connection's goroutine's work (removeConn and the
	// slot), called by whichever goroutine serves it last (run), with the
	// conn serving it then (a park changes it).
	done func(*conn)
	// canPark: the stream is plain kernel TCP, which may wait idle in
	// the Server's poller (idlepoll_linux.go); resumed: the wait for the
	// next request goes on after such a park.
	canPark bool
	resumed bool
}

var connPool = sync.Pool{New: func() any {
	c := newPooledConn()
	c.rbuf = make([]byte, initialReadBuf)
	return c
}}

// anchorPool holds the conns of HTTP/3 connections (h3conn.go), which
// anchor their requests in the server (settings, shards, addresses) but
// read no bytes through the conn: they have no read buffer, which would
// be 4 KiB held idle per QUIC connection. release tells them apart by
// that (a stream connection's conn always has one).
var anchorPool = sync.Pool{New: func() any { return newPooledConn() }}

// newPooledConn is a conn whose Request and ResponseWriter are tied to it.
func newPooledConn() *conn {
	c := &conn{}
	c.req.c = c
	c.req.body.c = c
	c.resp.sink = c
	c.resp.req = &c.req
	c.resp.encs.w = &c.resp
	c.resp.out = &c.out
	return c
}

func newConn(s *Server, st Stream) *conn {
	return initConn(connPool.Get().(*conn), s, st)
}

// newAnchorConn is newConn for a connection whose bytes do not pass
// through the conn (HTTP/3: each request has its stream).
func newAnchorConn(s *Server, st Stream) *conn {
	return initConn(anchorPool.Get().(*conn), s, st)
}

// initConn readies the cleared conn c (from connPool, or a loop's spares)
// for a new connection.
func initConn(c *conn, s *Server, st Stream) *conn {
	c.srv, c.st = s, st
	c.cfg = s.settings()
	c.paths = &c.cfg.paths
	c.home, c.ipHeld, c.errSent = nil, false, false
	c.h2c, c.lkey, c.altSvc = false, nil, ""
	c.r, c.w = 0, 0
	c.readDL, c.writeDL, c.now, c.evBegin = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	c.broken, c.inLoop = false, false
	c.watch, c.hijacked = nil, false
	c.canPark, c.resumed = streamParks(st), false
	c.state.Store(stateActive)
	c.req.srv = s
	c.req.remote = st.RemoteAddr()
	c.req.remoteIP = c.req.remoteIP[:0]
	c.lst = nil // countOpen sets it
	c.logOpen()
	return c
}

func (c *conn) release() {
	c.lst.Closed(c.shard)
	poison(c.rbuf[:c.w])
	if c.ipHeld {
		c.srv.ips.release(c.ip)
		c.ipHeld = false
	}
	c.cfg, c.home, c.lkey, c.done = nil, nil, nil, nil
	c.srv, c.st = nil, nil
	c.req.remote = nil
	c.req.srv = nil
	if cap(c.rbuf) > maxPooledBuf {
		c.rbuf = make([]byte, initialReadBuf)
	}
	if cap(c.out) > maxPooledBuf {
		c.out = nil
	}
	c.req.release()
	c.resp.release()
	if c.rbuf == nil {
		anchorPool.Put(c)
		return
	}
	connPool.Put(c)
}

// setReadDeadline sets the read deadline to now+d, lazily: a timer update
// costs about as much as parsing a small request head, and a keep-alive
// connection would pay it on every request. The deadline is moved only when
// it would otherwise expire early (later than wanted) or more than d/4 early.
func (c *conn) setReadDeadline(now time.Time, d time.Duration) {
	if d <= 0 {
		if !c.readDL.IsZero() {
			c.readDL = time.Time{}
			c.st.SetReadDeadline(time.Time{})
		}
		return
	}
	want := now.Add(d)
	if !c.readDL.IsZero() && !c.readDL.After(want) && want.Sub(c.readDL) < d/4 {
		return
	}
	c.readDL = want
	c.st.SetReadDeadline(want)
}

// setExactReadDeadline sets the deadline t as is (the read-header bound
// must not be stretched).
func (c *conn) setExactReadDeadline(t time.Time) {
	if t.Equal(c.readDL) {
		return
	}
	c.readDL = t
	c.st.SetReadDeadline(t)
}

// flush writes the pending responses.
func (c *conn) flush() error {
	if len(c.out) == 0 {
		return nil
	}
	if d := c.cfg.Timeouts.Write; d > 0 {
		// Lazy like setReadDeadline: each write gets between 3/4 of the
		// Write timeout and all of it.
		now := c.now
		if now.IsZero() {
			now = time.Now()
		}
		want := now.Add(d)
		if c.writeDL.IsZero() || want.Sub(c.writeDL) >= d/4 {
			c.writeDL = want
			c.st.SetWriteDeadline(want)
		}
	}
	_, err := c.st.Write(c.out)
	c.out = c.out[:0]
	if err != nil {
		c.broken = true
	}
	return err
}

// flushOut implements sink for ResponseWriter.
func (c *conn) flushOut(final bool) error {
	if c.inLoop || final && len(c.out) < flushThreshold {
		return nil // the loop batches it with the next responses
	}
	return c.flush()
}

// run serves the connection on this goroutine until it ends, then calls
// done. A connection idle long enough may park instead (parkIdle): this
// goroutine then ends, and idlePoll.resume serves the rest on a new one.
func (c *conn) run(first bool) {
	for c.serve(first) {
		if c.srv.idle.park(c) {
			return // c is connPool's now
		}
		c.resumed = true // no poller: wait here
		first = false
	}
	c.done(c)
}

// serve runs the connection loop until the client closes, an error, a
// timeout or Shutdown, or until it parks (true; the stream stays open).
func (c *conn) serve(first bool) (parked bool) {
	defer func() {
		if p := recover(); p != nil {
			c.srv.opts.Logger.Error("handler panic; connection closed", "panic", p, "remote", c.req.remote)
			parked = false
		}
		c.stopWatch()
		if !c.hijacked && !parked {
			c.st.Close()
		}
	}()
	if first && !c.serveProxyHeader() { // PROXY listeners (listenpolicy.go)
		return false
	}
	for ; ; first = false {
		n, err := c.readHead(first)
		if err == errParked {
			return true
		}
		if err != nil {
			if first && c.h2Start() {
				c.serveH2()
				return
			}
			if first && !isStreamError(err) && c.h2Silent(err) {
				return
			}
			if status := phttp.StatusFor(err); status != 0 && !isStreamError(err) {
				c.writeError(status)
			}
			// Only an error answer lingers here: a timeout, EOF
			// or Shutdown has no response for the client to read.
			if c.flush() == nil && c.errSent {
				c.linger()
			}
			return
		}
		if !c.serveOne(n) {
			if c.flush() == nil && c.lingerWanted() {
				c.linger()
			}
			return
		}
		if len(c.out) >= flushThreshold {
			if c.flush() != nil {
				return
			}
		}
	}
}

// streamError marks errors of the stream itself (read failures, timeouts,
// EOF) as opposed to parse errors, which get an answer.
type streamError struct{ err error }

func (e streamError) Error() string { return e.err.Error() }
func (e streamError) Unwrap() error { return e.err }

func isStreamError(err error) bool {
	var se streamError
	return errors.As(err, &se) || err == errShutdown
}

// readHead waits until rbuf[r:] starts with a complete request head and
// parses it into c.req.head, returning the head's length.
func (c *conn) readHead(first bool) (int, error) {
	var headStart time.Time
	for {
		if c.w > c.r {
			n, err := c.req.parseHead(c.cfg.parser, c.rbuf[c.r:c.w], c.paths)
			if err != phttp.ErrNeedMore {
				return n, err
			}
		}
		// Need more bytes: everything answered so far goes out first,
		// which ends a batch of pipelined responses.
		if err := c.flush(); err != nil {
			return 0, streamError{err}
		}
		if c.r > 0 {
			// The previous request is finished: its bytes may move.
			poison(c.rbuf[:c.r])
			c.w = copy(c.rbuf, c.rbuf[c.r:c.w])
			c.r = 0
		}
		if c.w == len(c.rbuf) {
			// The parser reports ErrHeaderTooLarge once it sees
			// MaxHeaderBytes, so the buffer never grows beyond that.
			c.grow(min(2*len(c.rbuf), c.cfg.Limits.MaxHeaderBytes))
		}
		idle := c.w == 0
		var w int64 // the state word of an idle wait
		if idle && c.resumed {
			// The wait goes on after a park (connidle.go), under its
			// state word, unless Shutdown or reclaimIdle ended it.
			c.resumed = false
			if w = c.state.Load(); w == stateWoken || c.srv.closing.Load() {
				c.state.Store(stateActive)
				return 0, errShutdown
			}
			c.setExactReadDeadline(c.resumeDeadline())
			goto read
		}
		if first && headStart.IsZero() {
			// The first head's budget runs from the accept (this
			// wait), not from its first byte: a new connection
			// gets ReadHeader in all, an established one Idle and
			// then ReadHeader (admit.go).
			headStart = time.Now()
		}
		if idle {
			since := c.now
			if first {
				since = headStart
				c.setExactReadDeadline(deadline(headStart, c.cfg.Timeouts.ReadHeader))
			} else {
				c.setReadDeadline(c.now, c.idleWait())
			}
			// Order matters: mark idle, then look at closing. Shutdown
			// sets closing, then wakes the connections it sees idle,
			// except a new one that may have its first request on the
			// way (sparedFresh), which it wakes later if it stays silent.
			w = idleWord(since, first)
			c.state.Store(w)
			if c.srv.closing.Load() {
				if !sparedFresh(w, freshCutoff(time.Now())) {
					return 0, errShutdown
				}
				// Spared, but no longer than that: nothing may wake it
				// (accepted after Close closed the connections).
				if g := since.Add(reclaimFreshAfter); c.readDL.IsZero() || g.Before(c.readDL) {
					c.setExactReadDeadline(g)
				}
			}
		} else {
			if headStart.IsZero() {
				headStart = time.Now()
			}
			c.setExactReadDeadline(deadline(headStart, c.cfg.Timeouts.ReadHeader))
		}
	read:
		nr, err := c.st.Read(c.rbuf[c.w:])
		if idle && c.state.Swap(stateActive) == stateWoken {
			// Shutdown interrupted the wait. A request that raced
			// with it is dropped unanswered, as a keep-alive client
			// expects from a server closing an idle connection.
			return 0, errShutdown
		}
		if idle && !first && nr == 0 && c.parkIdle(err, w) {
			return 0, errParked
		}
		c.w += nr
		if err != nil {
			return 0, streamError{err}
		}
	}
}

func deadline(from time.Time, d time.Duration) time.Time {
	if d <= 0 {
		return time.Time{}
	}
	return from.Add(d)
}

// grow replaces rbuf by one of size n holding the same bytes. Views into
// the old buffer stay valid: it is left unchanged for the GC.
func (c *conn) grow(n int) {
	if n <= len(c.rbuf) {
		n = 2 * len(c.rbuf)
	}
	nb := make([]byte, n)
	copy(nb, c.rbuf[:c.w])
	c.rbuf = nb
}

// serveOne runs the server's handler for the head of length n at rbuf[r:]
// and reports whether the connection stays open.
func (c *conn) serveOne(n int) bool {
	if rs, ok := c.st.(*redirectStream); ok { // redirect_to_https (redirect.go)
		return c.serveWith(n, rs)
	}
	return c.serveWith(n, c.srv.handlerFor(&c.req))
}

// serveWith is serveOne with the handler h: the event loop passes the one
// the Inliner chose, so the route is looked up once.
func (c *conn) serveWith(n int, h Handler) bool {
	reqStart, ok := c.startRequest(n)
	if !ok {
		return false
	}
	h.ServeEdge(&c.resp, &c.req)
	c.stopWatch()
	if c.hijacked {
		c.endRequest(reqStart) // the stream is the handler's now
		return false
	}
	if !c.req.body.done {
		c.answerBodyFailure()
		c.finishBody()
	}
	return c.endRequest(reqStart)
}

// startRequest begins serving the head of length n at rbuf[r:]: it
// consumes the head, sets up the Request and ResponseWriter and returns
// where the request starts in rbuf. ok is false when the body is over the
// limit (413 queued; the connection closes). The event loop's proxy
// (loopproxy_linux.go) calls it and endRequest around an exchange that
// spans several events.
func (c *conn) startRequest(n int) (reqStart int, ok bool) {
	s := c.srv
	head := &c.req.head
	reqStart = c.r
	c.r += n
	c.sent100 = false
	if max := c.cfg.Limits.MaxBodyBytes; head.Body == phttp.BodyLength && max > 0 && head.ContentLength > max {
		c.writeError(413)
		return reqStart, false
	}
	c.req.begin(c.rbuf[reqStart:c.r], c.r)
	c.req.identify()
	c.beginCount()
	c.resp.begin(head, head.Close || s.closingConns())
	c.resp.setRequestID(c.req.id.rid, s.opts.RequestID.Header)
	c.resp.altSvc = c.altSvc
	return reqStart, true
}

// endRequest completes the response of the request that started at
// rbuf[reqStart] and reports whether the connection stays open.
func (c *conn) endRequest(reqStart int) bool {
	s := c.srv
	if s.closingConns() {
		c.resp.closeConn = true
	}
	c.now = time.Now()
	c.resp.now = c.now
	c.resp.finish()
	c.count()
	c.logAccess()
	c.req.end()
	poison(c.rbuf[reqStart:c.r])
	return !c.resp.closeConn && !c.broken
}

// finishBody deals with a body the handler did not read to the end: it
// reads and discards a small remainder so the connection can serve the next
// request, and otherwise marks the connection for closing.
func (c *conn) finishBody() {
	b := &c.req.body
	if c.req.head.Expect100 && !c.sent100 && c.r == c.w {
		// The client waits for "100 Continue" before it sends the body;
		// answering without it and closing is what RFC 9110 §10.1.1
		// expects of a server that does not want the body.
		c.resp.closeConn = true
		return
	}
	if b.kind == phttp.BodyLength && b.length.Remaining() > maxDrainBody {
		c.resp.closeConn = true
		return
	}
	if err := b.discard(maxDrainBody); err != nil {
		c.resp.closeConn = true
	}
}

// expectContinue sends "100 Continue" before the first read of a body the
// client has not started sending (RFC 9110 §10.1.1).
func (c *conn) expectContinue() error {
	if !c.req.head.Expect100 || c.sent100 || c.resp.committed {
		return nil
	}
	c.sent100 = true
	c.out = append(c.out, continueLine...)
	return c.flush()
}

const continueLine = "HTTP/1.1 100 Continue\r\n\r\n"

// writeError queues a minimal error response that closes the connection,
// for input rejected before any handler ran.
func (c *conn) writeError(status int) {
	c.lst.ParseError(c.shard, status)
	c.errSent = true
	c.out = appendErrorResponse(c.out, status)
}

// readBody reads more raw body bytes into rbuf[w:], growing the buffer if
// it is full, under the body (Idle) timeout.
func (c *conn) readMore() error {
	if c.broken {
		return io.ErrUnexpectedEOF
	}
	if err := c.expectContinue(); err != nil {
		return err
	}
	if c.w == len(c.rbuf) {
		c.grow(2 * len(c.rbuf))
	}
	c.setBodyReadDeadline(time.Now())
	n, err := c.st.Read(c.rbuf[c.w:])
	c.w += n
	c.req.body.rate.got += int64(n)
	if err != nil {
		c.broken = true
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return err
	}
	return nil
}
