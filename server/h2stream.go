package server

import (
	"io"
	"os"
	"runtime"
	"sync"
	"time"

	phttp "github.com/simdedge/simdedge/parse/http"
	"golang.org/x/net/http2"

	"github.com/simdedge/simdedge/server/metrics"
)

// h2stream is one request and its response on an HTTP/2 connection, with
// the Request and ResponseWriter its handler sees. Its fields are under
// the connection's mu, except req, resp and wbuf, which belong to the
// handler while it runs.
//
// What is copied, and why: an HTTP/1.1 request's views point into the
// connection's read buffer. HTTP/2 fields arrive HPACK-coded (Huffman
// strings, references to the dynamic table), so no byte of the wire is the
// field itself: the decoder's fields are copied into hbuf, a buffer of the
// stream (pooled with it), and the head's views point there. DATA payloads
// are copied from the frame reader's buffer, which the next frame reuses,
// into in, which holds at most the stream's receive window.
type h2stream struct {
	hc *h2conn
	id uint32

	// streamReq is the Request and ResponseWriter (streamreq.go); its
	// wbuf takes the handler's body bytes, and flushOut moves them to
	// out.
	streamReq

	// in[inR:] is request body received and not read; got counts all
	// of it, declLen is its Content-Length (-1: none).
	in      []byte
	inR     int
	got     int64
	declLen int64
	// recvWin is what the client may still send; unacked what the
	// handler read and the client has not been given back.
	recvWin int64
	unacked int64
	// rerr fails the handler's reads and writes (reset, connection
	// gone).
	rerr error
	// onGone runs if the stream ends before its handler does
	// (Request.OnStreamGone, h2gone.go).
	onGone func()

	// out[outR:] is response body waiting for window; endPending: the
	// response ends after it (END_STREAM).
	out        []byte
	outR       int
	endPending bool
	sendWin    int64
	queued     bool // in hc.sending

	remoteDone  bool // END_STREAM received (half-closed remote)
	localDone   bool // END_STREAM sent (half-closed local)
	closed      bool
	reset       bool
	inline      bool
	handlerDone bool
}

var h2streamPool = sync.Pool{New: func() any {
	s := &h2stream{}
	s.init(s)
	s.resp.h2 = s
	s.req.body.h2 = s
	return s
}}

// newStream takes a pooled stream for id; under mu.
func (hc *h2conn) newStream(id uint32) *h2stream {
	s := h2streamPool.Get().(*h2stream)
	s.hc, s.id = hc, id
	s.in, s.inR, s.got, s.declLen = s.in[:0], 0, 0, -1
	s.recvWin = int64(max(hc.lim.InitialStreamWindow, h2InitialWindow))
	s.unacked, s.rerr, s.onGone = 0, nil, nil
	s.out, s.outR, s.endPending = s.out[:0], 0, false
	s.sendWin = hc.peerWindow
	s.queued = false
	s.remoteDone, s.localDone, s.closed, s.reset, s.inline, s.handlerDone = false, false, false, false, false, false
	return s
}

// putStream returns s to the pool once it is closed and its handler has
// returned.
func (hc *h2conn) putStream(s *h2stream) {
	s.hc = nil
	s.release()
	if cap(s.in) > maxPooledBuf {
		s.in = nil
	}
	if cap(s.out) > maxPooledBuf {
		s.out = nil
	}
	h2streamPool.Put(s)
}

// openStream starts a new stream whose header block was just decoded;
// under mu. A block that opens no stream (refused, malformed) is paid for
// from the idle budget (h2budget.go), one that does earns it tokens.
func (hc *h2conn) openStream(s *h2stream) error {
	id := hc.lastID
	d := &hc.hd
	end := hc.hend
	switch {
	case hc.goaway:
		// §6.8: streams after GOAWAY's last stream are ignored; the
		// reset tells the client it may retry elsewhere.
		hc.fr.WriteRSTStream(id, http2.ErrCodeRefusedStream)
		hc.putStream(s)
		return hc.idleFrame(true)
	case hc.hprio:
		hc.fr.WriteRSTStream(id, http2.ErrCodeProtocol) // §5.3.1
		hc.putStream(s)
		return hc.idleFrame(true)
	case d.malformed || !d.tooBig && !d.buildHead(&s.req.head, end):
		hc.fr.WriteRSTStream(id, http2.ErrCodeProtocol) // §8.1.1
		hc.putStream(s)
		return hc.idleFrame(true)
	case len(hc.streams) >= hc.lim.MaxConcurrentStreams || hc.running >= hc.lim.MaxConcurrentStreams:
		// §5.1.2. A stream whose handler still runs after a reset
		// keeps its slot: resets do not buy new handlers.
		hc.fr.WriteRSTStream(id, http2.ErrCodeRefusedStream)
		hc.putStream(s)
		return hc.countReset()
	}
	// The head's views point into d.buf: it becomes the stream's.
	s.hbuf, d.buf = d.buf, nil
	s.declLen = d.declLen
	s.remoteDone = end
	hc.streams[id] = s
	hc.opened++
	c := hc.c
	if len(hc.streams) == 1 {
		// Not idle any more: admission must not reclaim it now.
		c.state.Store(stateActive)
	}
	c.lst.HTTP2(c.shard, metrics.H2Stream)
	r := &s.req
	r.srv, r.c, r.remote = hc.srv, c, c.req.remote
	r.remoteIP = r.remoteIP[:0]
	if d.tooBig {
		// The HPACK bomb: the list was not kept; answer 431 as an
		// HTTP/1.1 head over the limit is (§8.1.1 allows it).
		r.head.Reset()
		r.head.Method, r.head.Target, r.head.Version = h2ErrMethod, h2ErrTarget, phttp.HTTP11
		s.begin(c, hc.in.at)
		hc.runInline(s, h2TooLarge{})
		return nil
	}
	s.begin(c, hc.in.at)
	if r.normalizeTarget(c.paths) != nil { // paths.go
		hc.runInline(s, pathRefused{})
		return nil
	}
	// The route is looked up once, here (plan.go): inline when the
	// stream has no body and its plan runs without blocking, else on
	// the stream's goroutine.
	p := r.planFor(hc.srv.router)
	if end {
		if h := p.inline(r); h != nil {
			hc.runInline(s, h)
			return nil
		}
	}
	hc.running++
	hc.handlers.Add(1)
	hc.srv.workers.start(streamTask{h2: hc, s: s, p: p})
	return nil
}

var (
	h2ErrMethod = []byte("GET")
	h2ErrTarget = []byte("/")
)

// h2TooLarge answers a request whose fields were over the limit.
type h2TooLarge struct{}

func (h2TooLarge) ServeEdge(w *ResponseWriter, _ *Request) {
	w.WriteHeader(431)
	w.AddHeader("Content-Type", "text/plain; charset=utf-8")
	w.WriteString("Request Header Fields Too Large\n")
}

// runInline serves s on the reader goroutine (a request without a body
// that the Inliner takes: respond, echo, 404); under mu, which it lets go
// while the handler runs.
func (hc *h2conn) runInline(s *h2stream, h Handler) {
	s.inline = true
	hc.running++
	hc.mu.Unlock()
	ok := s.serve(hc.c, h)
	hc.mu.Lock()
	hc.handlerEnded(s, ok)
}

// runStream serves s on a stream worker (streamwork.go).
func (hc *h2conn) runStream(s *h2stream, h Handler) {
	defer hc.handlers.Done()
	ok := s.serve(hc.c, h)
	hc.mu.Lock()
	hc.handlerEnded(s, ok)
	if hc.flushing {
		// Another handler's flush, still to come, carries these frames.
		hc.mu.Unlock()
		return
	}
	// Handlers that finish at the same moment (a proxy's streams whose
	// upstream answers arrived together) share one write: this one
	// yields once before flushing, and those that finish meanwhile leave
	// their frames to it.
	hc.flushing = true
	hc.mu.Unlock()
	runtime.Gosched()
	hc.mu.Lock()
	hc.flushing = false
	hc.out.Flush()
	hc.mu.Unlock()
}

// handlerEnded records that s's handler returned; under mu. A stream the
// client still sends a body on is reset with NO_ERROR once the response
// is out (§8.1); its unread body is given back to the connection window.
func (hc *h2conn) handlerEnded(s *h2stream, ok bool) {
	hc.running--
	s.handlerDone = true
	s.onGone = nil
	if n := len(s.in) - s.inR; n > 0 {
		hc.creditConn(int64(n))
		s.in, s.inR = s.in[:0], 0
	}
	if !ok && !s.closed {
		hc.resetStream(s.id, http2.ErrCodeInternal)
	}
	if s.closed {
		hc.putStream(s)
		return
	}
	if s.localDone {
		hc.localEnded(s)
	}
}

// remoteEnded: END_STREAM arrived (half-closed remote); under mu.
func (hc *h2conn) remoteEnded(s *h2stream) {
	s.remoteDone = true
	if s.localDone {
		hc.closeStream(s)
	}
}

// localEnded: END_STREAM went out; under mu.
func (hc *h2conn) localEnded(s *h2stream) {
	switch {
	case s.remoteDone:
		if hc.resets > 0 {
			hc.resets-- // a completed stream earns a reset back
		}
		hc.closeStream(s)
	case s.handlerDone:
		hc.lingerStream(s)
	}
}

// h2ResetGrace is how long a stream whose response ended before its
// request body stays half-closed before RST_STREAM NO_ERROR asks the
// client to stop sending (§8.1): frames already in flight for it (window
// updates, DATA) are still checked and counted as on an open stream.
const h2ResetGrace = 500 * time.Millisecond

// lingerStream schedules that reset; under mu.
func (hc *h2conn) lingerStream(s *h2stream) {
	id := s.id
	time.AfterFunc(h2ResetGrace, func() {
		hc.mu.Lock()
		defer hc.mu.Unlock()
		if hc.streams[id] == s && !hc.dead {
			hc.fr.WriteRSTStream(id, http2.ErrCodeNo)
			hc.closeStream(s)
			hc.out.Flush()
		}
	})
}

// closeStream takes s out of the connection; under mu. The stream goes
// back to the pool here if its handler has returned, else when it does.
func (hc *h2conn) closeStream(s *h2stream) {
	if s.closed {
		return
	}
	s.closed = true
	if s.rerr == nil {
		s.rerr = errH2StreamReset
	} else if s.onGone != nil && !s.handlerDone {
		// Reset (by either side) or the connection is gone, while
		// the handler still runs.
		s.onGone()
		s.onGone = nil
	}
	delete(hc.streams, s.id)
	if !hc.draining && hc.c.srv.draining.Load() {
		hc.drain() // opened during StartDrain: one stream, then GOAWAY
	}
	if len(hc.streams) == 0 {
		hc.idleAt = time.Time{}
		hc.idleAgain()
	}
	if s.queued {
		for i, q := range hc.sending {
			if q == s {
				hc.sending = append(hc.sending[:i], hc.sending[i+1:]...)
				break
			}
		}
		s.queued = false
	}
	if n := len(s.in) - s.inR; n > 0 {
		hc.creditConn(int64(n))
		s.in, s.inR = s.in[:0], 0
	}
	hc.cond.Broadcast()
	hc.wakeIfDrained()
	if s.handlerDone {
		hc.putStream(s)
	}
}

// creditConn gives n consumed bytes back to the connection's receive
// window, with a WINDOW_UPDATE once half the window is owed; under mu.
func (hc *h2conn) creditConn(n int64) {
	hc.connUnacked += n
	if hc.connUnacked >= int64(hc.lim.ConnWindow)/2 && !hc.dead {
		hc.fr.WriteWindowUpdate(0, uint32(hc.connUnacked))
		hc.recvConn += hc.connUnacked
		hc.connUnacked = 0
	}
}

// creditStream is creditConn for a stream's window.
func (hc *h2conn) creditStream(s *h2stream, n int64) {
	s.unacked += n
	if s.unacked >= int64(hc.lim.InitialStreamWindow)/2 && !s.remoteDone && !s.closed && !hc.dead {
		hc.fr.WriteWindowUpdate(s.id, uint32(s.unacked))
		s.recvWin += s.unacked
		s.unacked = 0
	}
}

// read is the stream's body reader (bodyReader.Read): it waits for DATA
// under the Idle timeout and the body's minimum rate, as an HTTP/1.1 body
// read does.
func (s *h2stream) read(b *bodyReader, p []byte) (int, error) {
	hc := s.hc
	hc.mu.Lock()
	defer hc.mu.Unlock()
	if s.inR == len(s.in) && !s.remoteDone && s.rerr == nil {
		hc.out.Flush() // a WINDOW_UPDATE may be what the client waits for
		hc.wait(s.bodyWait(time.Now()), func() bool {
			return s.inR < len(s.in) || s.remoteDone || s.rerr != nil
		})
	}
	if s.inR == len(s.in) {
		switch {
		case s.remoteDone:
			b.done = true
			return 0, io.EOF
		case s.rerr != nil:
			b.err = s.rerr
			return 0, s.rerr
		}
		// Answered 408, then RST_STREAM NO_ERROR. A response already
		// begun cannot become a 408: the stream is reset instead, as
		// an HTTP/1.1 connection would be closed.
		b.err = errH2BodyTimeout
		if s.begun.Load() {
			hc.resetStream(s.id, http2.ErrCodeCancel)
			hc.out.Flush()
		}
		return 0, b.err
	}
	n := copy(p, s.in[s.inR:])
	s.inR += n
	if s.inR == len(s.in) {
		s.in, s.inR = s.in[:0], 0
	}
	b.read += int64(n)
	if m := s.req.limits().MaxBodyBytes; m > 0 && b.read > m {
		b.err = ErrBodyTooLarge // answered 413, then RST_STREAM NO_ERROR
		return n, b.err
	}
	hc.creditConn(int64(n))
	hc.creditStream(s, int64(n))
	hc.out.Flush()
	return n, nil
}

// bodyWait is how long a body read starting at now may wait: Idle, or
// less if the body's minimum rate runs out sooner (streamRate.wait);
// under mu.
func (s *h2stream) bodyWait(now time.Time) time.Duration {
	return s.rate.wait(s.hc.c.timeouts(), now, s.got, s.begun.Load())
}

// errH2BodyTimeout is a body read that waited Idle, or fell behind the
// body's minimum rate (408). It is os.ErrDeadlineExceeded, as an HTTP/1.1
// body read's deadline error is.
var errH2BodyTimeout error = h2Timeout{}

type h2Timeout struct{}

func (h2Timeout) Error() string   { return "server: http2 request body timed out" }
func (h2Timeout) Timeout() bool   { return true }
func (h2Timeout) Temporary() bool { return true }
func (h2Timeout) Unwrap() error   { return os.ErrDeadlineExceeded }

// wait waits on cond until ready reports true, the connection dies or d
// passes (d <= 0: no bound); under mu.
func (hc *h2conn) wait(d time.Duration, ready func() bool) {
	expired := false
	var t *time.Timer
	if d > 0 {
		t = time.AfterFunc(d, func() {
			hc.mu.Lock()
			expired = true
			hc.cond.Broadcast()
			hc.mu.Unlock()
		})
		defer t.Stop()
	}
	for !ready() && !expired && !hc.dead {
		hc.cond.Wait()
	}
}
