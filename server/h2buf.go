package server

import (
	"errors"
	"io"
	"os"
	"sync"
	"time"
)

// The frame reader's and writer's buffers of an HTTP/2 connection, which
// an idle connection gives back (docs/decisions/0049-small-idle-
// connections.md). bufio's Reader and Writer keep their buffers for life,
// and the Framer writes into the writer it was made with, so both are our
// own: h2in takes its buffer on the first read after idle, h2out on the
// first write (a small one, the full one when a write does not fit), and
// both give it back when the reader has waited parkAfter for a frame with
// no stream open and nothing buffered (h2conn.rest). A connection that
// sends requests more often than that never gives them back: the request
// path costs what it did.

// h2InPool and h2OutPool hold the buffers of idle HTTP/2 connections;
// h2OutSmallPool the writer's first buffer after idle, enough for the
// SETTINGS, acknowledgements and small responses that most waking
// connections write: the full one is taken when a write does not fit.
var (
	h2InPool       = sync.Pool{New: func() any { b := make([]byte, h2ReadBuf); return &b }}
	h2OutPool      = sync.Pool{New: func() any { b := make([]byte, h2WriteBuf); return &b }}
	h2OutSmallPool = sync.Pool{New: func() any { b := make([]byte, h2WriteSmall); return &b }}
)

// h2WriteSmall is the size of h2OutSmallPool's buffers.
const h2WriteSmall = 4 << 10

// h2in is the Framer's reader: buffered reads of src, the connection's
// Stream. Only the connection's reader goroutine uses it.
type h2in struct {
	hc  *h2conn
	src io.Reader
	// buf[r:w] is read and not yet taken; buf is nil while given back
	// (its *[]byte is bp, kept to put it back without an allocation).
	buf  []byte
	bp   *[]byte
	r, w int
	// fresh: nothing has been taken since the reader began waiting for
	// the next frame (serve sets it), so a wait that ends now ends
	// between two frames.
	fresh bool
	// at is when the last read of src returned bytes: the streams whose
	// heads it completes begin then (streamReq.at).
	at time.Time
}

// Buffered is how many bytes are read and not yet taken.
func (b *h2in) Buffered() int { return b.w - b.r }

func (b *h2in) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for b.r == b.w {
		if b.buf == nil {
			// Given back while idle: the bytes that end the wait go
			// straight to p (a frame header's first bytes), then
			// the buffer comes back for the rest.
			n, err := b.src.Read(p)
			if n > 0 {
				b.at = time.Now()
				b.take()
				b.fresh = false
				return n, nil
			}
			if err != nil && b.hc.rest(err, b.fresh) {
				continue
			}
			return 0, err
		}
		n, err := b.src.Read(b.buf)
		if n > 0 {
			b.at = time.Now()
			b.r, b.w = 0, n
			break
		}
		if err == nil {
			return 0, io.ErrNoProgress
		}
		if b.hc.rest(err, b.fresh) {
			continue
		}
		return 0, err
	}
	n := copy(p, b.buf[b.r:b.w])
	b.r += n
	b.fresh = false
	return n, nil
}

// view returns the next n bytes if the buffer holds them all, as a view
// of it valid until the next read.
func (b *h2in) view(n int) ([]byte, bool) {
	if b.w-b.r < n {
		return nil, false
	}
	v := b.buf[b.r : b.r+n : b.r+n]
	b.r += n
	if n > 0 {
		b.fresh = false
	}
	return v, true
}

func (b *h2in) take() {
	b.bp = h2InPool.Get().(*[]byte)
	b.buf, b.r, b.w = *b.bp, 0, 0
}

// release gives the buffer back if it holds nothing.
func (b *h2in) release() {
	if b.buf != nil && b.r == b.w {
		h2InPool.Put(b.bp)
		b.buf, b.bp, b.r, b.w = nil, nil, 0, 0
	}
}

// h2out is the Framer's writer: frames gather in buf until Flush, under
// h2conn.mu as every frame write is. Like bufio.Writer, a failed write is
// sticky.
type h2out struct {
	dst io.Writer
	buf []byte
	bp  *[]byte
	n   int
	err error
}

func (b *h2out) Buffered() int { return b.n }

func (b *h2out) Write(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if b.buf == nil {
		b.bp = h2OutSmallPool.Get().(*[]byte)
		b.buf = *b.bp
	}
	nn := 0
	for len(p) > len(b.buf)-b.n {
		if len(b.buf) < h2WriteBuf {
			b.grow()
			continue
		}
		var n int
		if b.n == 0 {
			// Larger than the buffer: straight to the socket.
			n, b.err = b.dst.Write(p)
		} else {
			n = copy(b.buf[b.n:], p)
			b.n += n
			b.Flush()
		}
		nn += n
		p = p[n:]
		if b.err != nil {
			return nn, b.err
		}
	}
	n := copy(b.buf[b.n:], p)
	b.n += n
	return nn + n, nil
}

// Flush writes what is buffered.
func (b *h2out) Flush() error {
	if b.err != nil {
		return b.err
	}
	if b.n == 0 {
		return nil
	}
	n, err := b.dst.Write(b.buf[:b.n])
	if n < b.n && err == nil {
		err = io.ErrShortWrite
	}
	if err != nil {
		if n > 0 && n < b.n {
			copy(b.buf, b.buf[n:b.n])
		}
		b.n -= n
		b.err = err
		return err
	}
	b.n = 0
	return nil
}

// grow moves what is buffered from the small buffer to a full one.
func (b *h2out) grow() {
	bp := h2OutPool.Get().(*[]byte)
	copy(*bp, b.buf[:b.n])
	h2OutSmallPool.Put(b.bp)
	b.bp, b.buf = bp, *bp
}

// release gives the buffer back if it holds nothing; under h2conn.mu.
func (b *h2out) release() {
	if b.buf == nil || b.n != 0 {
		return
	}
	if len(b.buf) < h2WriteBuf {
		h2OutSmallPool.Put(b.bp)
	} else {
		h2OutPool.Put(b.bp)
	}
	b.buf, b.bp = nil, nil
}

// inputReleaser is a Stream with an input buffer of its own that it can
// do without once the connection is HTTP/2 (the loop's TLS wire, after
// the hand-off): serveH2 and rest call it.
type inputReleaser interface{ releaseInput() }

// rest decides what a read that failed with err while the reader waited
// for a frame does: true to read again. The read deadline of an idle
// connection is first only parkAfter away (softDL, armRead); when that
// passes between two frames (fresh), the connection gives its buffers
// back, and either way the read goes on under the real deadline
// (hardDL). Anything else (the real deadline, Shutdown, reclaimIdle,
// draining, a closed socket) ends the read as before.
func (hc *h2conn) rest(err error, fresh bool) bool {
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		return false
	}
	c := hc.c
	hc.mu.Lock()
	defer hc.mu.Unlock()
	if !hc.soft || hc.dead || hc.draining || !c.readDL.Equal(hc.softDL) || time.Now().Before(hc.softDL) {
		return false // not the soft deadline: someone woke the reader
	}
	hc.soft = false
	if !hc.hardDL.IsZero() && !time.Now().Before(hc.hardDL) {
		return false // due: the Idle timeout ends it
	}
	c.setExactReadDeadline(hc.hardDL)
	// A waker (Shutdown, reclaimIdle) that set a past deadline before
	// this one must not be lost: it marked the state or the server
	// first, and is seen here.
	if c.state.Load() == stateWoken || c.srv.closing.Load() {
		c.setExactReadDeadline(aLongTimeAgo)
		return false
	}
	if fresh && len(hc.streams) == 0 {
		hc.in.release()
		hc.rd.release()
		// The last frame's views point into the buffer just given
		// back: they would keep it alive once the pool let it go.
		hc.f = h2frame{}
		hc.out.release()
		hc.enc.release()
		if r, ok := c.st.(inputReleaser); ok {
			r.releaseInput()
		}
	}
	return true
}

// softDeadline sets the read deadline of an idle wait whose real deadline
// is dl (zero: none): about parkAfter from now if dl is later than twice
// that, so that rest gives the buffers back then. Lazily, as
// setReadDeadline does: a connection busy with requests moves its timer
// once per quarter of parkAfter, not once per request. Under mu.
func (hc *h2conn) softDeadline(now, dl time.Time) bool {
	if !dl.IsZero() && dl.Sub(now) <= 2*parkAfter {
		return false
	}
	hc.c.setReadDeadline(now, parkAfter)
	hc.soft, hc.hardDL, hc.softDL = true, dl, hc.c.readDL
	return true
}

// idleDeadline is since+d, zero for none.
func idleDeadline(since time.Time, d time.Duration) time.Time {
	if d <= 0 {
		return time.Time{}
	}
	return since.Add(d)
}

// h2LingerBuf is the buffer an HTTP/2 connection's lingering close
// discards into: the frame reader's size, taken when the connection ends
// (it then goes back to connPool with its conn, as a read buffer).
func h2LingerBuf() []byte { return make([]byte, initialReadBuf) }
