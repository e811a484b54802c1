package server

import (
	"bytes"
	"errors"
	"io"
	"net"
	"sync"
	"time"

	"golang.org/x/net/http2"
)

// h2conn is one HTTP/2 connection (RFC 9113). Its reader goroutine (the
// connection's own, conn.serve) reads frames (h2read.go), keeps
// the stream states and decodes header blocks with hpack; handlers run on
// it (inline, for a request without a body that the Inliner takes) or on a
// goroutine per stream. Everything that handlers share with the reader
// (flow-control windows, the streams' buffers, the HPACK encoder and the
// writing of frames) is under mu; frames are written into out under mu by
// whichever goroutine has something to send, and flushed before mu is let
// go when nothing more is about to follow.
type h2conn struct {
	c   *conn
	srv *Server
	lim *HTTP2Limits
	// fr writes the server's frames (x/net's Framer); rd reads the
	// client's into f.
	fr  *http2.Framer
	in  h2in
	rd  h2reader
	f   h2frame
	dec hpackDec
	// hd is the state of the header block being decoded (h2headers.go).
	hd h2decode
	// hblock holds a header block's fragments until END_HEADERS
	// (HEADERS, then CONTINUATION frames); hstream is its stream, hend
	// the HEADERS frame's END_STREAM flag, hprio: the HEADERS depended
	// on its own stream.
	hblock  []byte
	hstream uint32
	hend    bool
	hprio   bool
	// firstFrame: the client's SETTINGS has not arrived yet.
	firstFrame bool
	// startAt is when the preface was awaited; startDL the ReadHeader
	// deadline from then, which bounds the connection's first request.
	startAt, startDL time.Time
	// hconts counts the CONTINUATION frames of the header block being
	// read; blockDL is its ReadHeader deadline (zero: no block open, or
	// no ReadHeader), blockArmed says the reader waits under it, and
	// rearm that the deadline of the next read must be set even if the
	// next frame is buffered (h2frames.go).
	hconts     int
	blockDL    time.Time
	blockArmed bool
	rearm      bool
	// idle is the budget of frames that make no progress (h2budget.go).
	idle h2budget
	// handlers counts the stream goroutines, which serve waits for.
	handlers sync.WaitGroup

	mu   sync.Mutex
	cond sync.Cond
	out  h2out
	// enc encodes the response heads and trailers (hpackenc.go).
	enc hpackEnc
	// streams are the streams not closed, by ID; lastID is the highest
	// stream ID the client opened (GOAWAY's last stream).
	streams map[uint32]*h2stream
	lastID  uint32
	// running counts the handlers not returned (inline or goroutine),
	// reset streams' included.
	running int
	// resets counts the streams the client reset or the server
	// refused, less the ones that completed (HTTP2Limits.MaxResets).
	resets int
	// idleAt is when the connection last had no stream left (zero: not
	// noted yet): Idle counts from there, and frames that open no
	// stream (PING, SETTINGS...) do not extend it, as in Go's server.
	idleAt time.Time
	// recvData and sentData count the DATA payload bytes received and
	// sent, opened the streams opened: the work that refills idle.
	recvData, sentData, opened int64
	// sending are the streams with response bytes or an end waiting for
	// the flow-control windows.
	sending []*h2stream
	// sendConn is the connection's send window; peerWindow and
	// peerFrame the client's SETTINGS_INITIAL_WINDOW_SIZE and
	// SETTINGS_MAX_FRAME_SIZE.
	sendConn   int64
	peerWindow int64
	peerFrame  int
	// recvConn is what the client may still send on the connection;
	// connUnacked what handlers consumed and the client has not been
	// given back yet.
	recvConn    int64
	connUnacked int64
	// goaway: a GOAWAY went out (no new streams); draining: end once no
	// stream is left; dead: the connection failed or ended.
	goaway   bool
	draining bool
	dead     bool
	// wfail: a write failed (nothing more reaches the client).
	wfail bool
	// flushing: a finished handler is about to flush (runStream).
	flushing bool
	// soft: the reader waits idle under softDL, parkAfter away, and then
	// under hardDL, its real deadline (zero: none); h2buf.go.
	soft           bool
	softDL, hardDL time.Time
}

// Errors of HTTP/2 streams, as a handler's body reads and writes see them.
var (
	errH2StreamReset = errors.New("server: http2 stream reset")
	errH2ConnClosed  = errors.New("server: http2 connection closed")
	errH2BadPreface  = errors.New("server: http2 connection preface missing")
)

// h2ConnError is a connection error (RFC 9113 §5.4.1): the reader sends
// GOAWAY with code and ends the connection.
type h2ConnError http2.ErrCode

func (e h2ConnError) Error() string {
	return "server: http2 connection error " + http2.ErrCode(e).String()
}

// h2ReadBuf sizes the frame reader's buffer: a frame header and a
// default-size frame.
const h2ReadBuf = 16<<10 + 9

// h2WriteBuf sizes the frame writer's buffer: a few full DATA frames
// go out in one write.
const h2WriteBuf = 64 << 10

func newH2conn(c *conn) *h2conn {
	s := c.srv
	hc := &h2conn{
		c: c, srv: s, lim: &s.opts.HTTP2,
		streams:    map[uint32]*h2stream{},
		sendConn:   h2InitialWindow,
		peerWindow: h2InitialWindow,
		peerFrame:  h2MinFrameSize,
	}
	hc.cond.L = &hc.mu
	// The bytes the HTTP/1.1 reader already took (the preface and
	// whatever followed it) come first.
	var in io.Reader = c.st
	if c.w > c.r {
		in = io.MultiReader(bytes.NewReader(c.rbuf[c.r:c.w]), c.st)
	}
	hc.in = h2in{hc: hc, src: in}
	hc.out = h2out{dst: h2writer{hc}}
	hc.fr = http2.NewFramer(&hc.out, nil)
	hc.rd = h2reader{in: &hc.in, max: uint32(min(hc.lim.MaxFrameSize, h2MaxFrameSize))}
	hc.enc.init()
	// No field (name or value) can be longer than the whole list may
	// be: longer strings fail before they are decoded into memory.
	hc.dec.init(h2TableSize, hc.lim.MaxHeaderListSize)
	hc.recvConn = int64(hc.lim.ConnWindow)
	return hc
}

// h2TableSize is the HPACK dynamic table size, the protocol's default
// (SETTINGS_HEADER_TABLE_SIZE is not sent).
const h2TableSize = 4096

// h2writer is the socket under out, with the Write timeout.
type h2writer struct{ hc *h2conn }

func (w h2writer) Write(p []byte) (int, error) {
	c := w.hc.c
	if d := c.cfg.Timeouts.Write; d > 0 {
		c.st.SetWriteDeadline(time.Now().Add(d))
	}
	n, err := c.st.Write(p)
	if err != nil {
		w.hc.dead = true // under mu: every write is
		w.hc.wfail = true
	}
	return n, err
}

// serve runs the reader until the connection ends, then waits for the
// handlers still running.
func (hc *h2conn) serve() {
	defer hc.end()
	if err := hc.start(); err != nil {
		return
	}
	for {
		if !hc.armRead() {
			return
		}
		hc.in.fresh = true
		if err := hc.rd.next(&hc.f); err != nil {
			if !hc.readFailed(err) {
				return
			}
			continue
		}
		if err := hc.process(&hc.f); err != nil {
			var ce h2ConnError
			if errors.As(err, &ce) {
				hc.connError(http2.ErrCode(ce))
			}
			return
		}
		if hc.in.Buffered() == 0 {
			hc.mu.Lock()
			hc.out.Flush()
			hc.mu.Unlock()
		}
	}
}

// start reads the preface and sends the server's SETTINGS and the
// connection window (RFC 9113 §3.4). The first frame the client sends must
// be SETTINGS; process checks it.
func (hc *h2conn) start() error {
	c := hc.c
	now := time.Now()
	hc.startBudget(now)
	hc.startAt, hc.startDL = now, h2Deadline(c.cfg.Timeouts.ReadHeader)
	c.setExactReadDeadline(hc.startDL)
	var p [len(h2Preface)]byte
	if _, err := io.ReadFull(&hc.in, p[:]); err != nil {
		return err
	}
	if string(p[:]) != h2Preface {
		return errH2BadPreface
	}
	hc.mu.Lock()
	defer hc.mu.Unlock()
	hc.fr.WriteSettings(
		http2.Setting{ID: http2.SettingMaxConcurrentStreams, Val: uint32(hc.lim.MaxConcurrentStreams)},
		http2.Setting{ID: http2.SettingInitialWindowSize, Val: uint32(hc.lim.InitialStreamWindow)},
		http2.Setting{ID: http2.SettingMaxFrameSize, Val: uint32(hc.lim.MaxFrameSize)},
		http2.Setting{ID: http2.SettingMaxHeaderListSize, Val: uint32(hc.lim.MaxHeaderListSize)},
	)
	if d := hc.lim.ConnWindow - h2InitialWindow; d > 0 {
		hc.fr.WriteWindowUpdate(0, uint32(d))
	}
	hc.firstFrame = true
	return hc.out.Flush()
}

// armRead sets the read deadline for the next frame and reports whether
// to read it: a connection without open streams waits Idle for one (and
// is idle for Shutdown and admission), one whose output waits for window
// updates waits Write, one with streams open waits on (their handlers
// bound their own waits). A draining connection without streams ends.
func (hc *h2conn) armRead() bool {
	c := hc.c
	hc.mu.Lock()
	defer hc.mu.Unlock()
	if hc.dead || hc.draining && len(hc.streams) == 0 {
		return false
	}
	if !hc.blockDL.IsZero() {
		// A header block is open: ReadHeader bounds the rest of it,
		// whatever else the connection waits for.
		if !hc.blockArmed {
			hc.soft = false
			c.setExactReadDeadline(hc.blockDL)
			c.state.Store(stateActive) // a request is arriving
			hc.blockArmed = true
		}
		return true
	}
	if hc.in.Buffered() > 0 && !hc.rearm {
		// The next frame (or its start) is here: the deadline set when
		// the reader last waited still bounds the rest of it, and
		// nothing costs a clock read per frame of a batch.
		return true
	}
	hc.rearm, hc.soft = false, false
	switch {
	case hc.firstFrame:
		// The preface's ReadHeader deadline runs on.
	case len(hc.streams) == 0:
		now := time.Now()
		since, first := now, hc.lastID == 0 && !hc.startDL.IsZero()
		if first {
			since = hc.startAt
			// The first request must come within ReadHeader of the
			// preface, as an HTTP/1.1 connection's first head must
			// from the accept: a connection that never asks for
			// anything gets less time than one that did.
			c.setExactReadDeadline(hc.startDL)
		} else {
			if hc.idleAt.IsZero() {
				hc.idleAt = now
			}
			since = hc.idleAt
			if !hc.softDeadline(now, idleDeadline(since, c.cfg.Timeouts.Idle)) {
				c.setReadDeadline(since, c.cfg.Timeouts.Idle)
			}
		}
		c.state.Store(idleWord(since, first))
		if c.srv.closing.Load() {
			return false
		}
	case len(hc.sending) > 0:
		c.setExactReadDeadline(h2Deadline(c.cfg.Timeouts.Write))
		c.state.Store(stateActive)
	default:
		c.setExactReadDeadline(time.Time{})
		c.state.Store(stateActive)
	}
	return true
}

// idleAgain gives the reader the Idle deadline when the last stream has
// closed while it waited without one (armRead: streams were open), as a
// handler on its own goroutine closes its stream; without it the
// connection would wait for the client's next frame for ever. Under mu,
// as every change of the h2 reader's deadline is.
func (hc *h2conn) idleAgain() {
	c := hc.c
	if hc.dead || !c.readDL.IsZero() {
		return
	}
	now := time.Now()
	hc.idleAt = now
	if !hc.softDeadline(now, idleDeadline(now, c.cfg.Timeouts.Idle)) {
		c.setReadDeadline(now, c.cfg.Timeouts.Idle)
	}
	c.state.Store(idleWord(now, false))
}

// readFailed handles a frame reader's error and reports whether to go on.
func (hc *h2conn) readFailed(err error) bool {
	var se http2.StreamError
	switch {
	case errors.As(err, &se):
		// The frame was consumed; only its stream fails.
		hc.mu.Lock()
		hc.resetStream(se.StreamID, se.Code)
		hc.out.Flush()
		hc.mu.Unlock()
		return true
	case errors.Is(err, http2.ErrFrameTooLarge):
		hc.connError(http2.ErrCodeFrameSize)
	default:
		var ce http2.ConnectionError
		if errors.As(err, &ce) {
			hc.connError(http2.ErrCode(ce))
			return false
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			// Idle, Shutdown or admission woke an idle connection,
			// or output stalled: say goodbye politely.
			hc.connError(http2.ErrCodeNo)
		}
	}
	return false
}

// connError sends GOAWAY with code (RFC 9113 §5.4.1) and marks the
// connection dead.
func (hc *h2conn) connError(code http2.ErrCode) {
	hc.mu.Lock()
	defer hc.mu.Unlock()
	if !hc.dead {
		hc.fr.WriteGoAway(hc.lastID, code, nil)
		hc.out.Flush()
	}
	hc.goaway = true
	hc.kill()
}

// kill marks the connection dead and wakes every waiting handler; under mu.
func (hc *h2conn) kill() {
	hc.dead = true
	for _, s := range hc.streams {
		s.rerr = errH2ConnClosed
	}
	hc.cond.Broadcast()
}

// end closes the connection and waits for the handlers.
func (hc *h2conn) end() {
	hc.mu.Lock()
	if !hc.dead {
		hc.out.Flush()
	}
	hc.kill()
	lingering := !hc.wfail
	hc.mu.Unlock()
	if lingering {
		// Frames the client sent after our last read (a PING after its
		// GOAWAY) would make closing reset the connection, and the
		// client might lose the GOAWAY (linger.go). serveH2 gave the
		// read buffer that linger discards into back.
		hc.c.rbuf = h2LingerBuf()
		hc.c.linger()
	}
	hc.c.st.Close()
	hc.handlers.Wait()
	hc.mu.Lock()
	for _, s := range hc.streams {
		hc.closeStream(s)
	}
	hc.mu.Unlock()
}

// drain starts a graceful close (Shutdown, StopListener): GOAWAY with the
// last stream ID, no new streams, the open ones served to their end. It
// runs on a goroutine of its own: the write may wait for a slow client.
func (hc *h2conn) drain() {
	go func() {
		hc.mu.Lock()
		defer hc.mu.Unlock()
		if hc.dead || hc.draining {
			return
		}
		hc.draining = true
		if !hc.goaway {
			hc.goaway = true
			hc.fr.WriteGoAway(hc.lastID, http2.ErrCodeNo, nil)
			hc.out.Flush()
		}
		hc.wakeIfDrained()
	}()
}

// wakeIfDrained interrupts the reader of a draining connection whose last
// stream has closed; under mu (armRead checks under mu too, so the two
// cannot miss each other).
func (hc *h2conn) wakeIfDrained() {
	if hc.draining && len(hc.streams) == 0 {
		hc.c.st.SetReadDeadline(aLongTimeAgo)
	}
}
