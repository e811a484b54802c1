package server

import (
	"errors"
	"io"
	"time"

	phttp "github.com/simdedge/simdedge/parse/http"
)

// ErrBodyTooLarge is returned by Request.BodyBytes (and the body reader)
// when the body exceeds Limits.MaxBodyBytes; answer it with 413.
var ErrBodyTooLarge = phttp.ErrBodyTooLarge

// bodyReader streams the current request's body. On a stream connection
// the bytes come first from the read buffer, then from the stream: a
// Content-Length body past the buffered part is read straight into the
// caller's slice (no copy through rbuf); a chunked body is decoded in place
// in rbuf, after the head, so the head's views stay intact. On a message
// transport the body is already whole (msg).
type bodyReader struct {
	c       *conn // nil on a message transport
	kind    phttp.BodyKind
	length  phttp.LengthDecoder
	chunked phttp.ChunkedDecoder
	// rbuf[ds:de] is decoded chunk data not yet delivered.
	ds, de int
	// bodyStart is the offset in rbuf where the body began (the end of
	// the head); chunked decoding compacts partial lines back to it.
	bodyStart int
	// finished: the chunked decoder reached the end of the body.
	finished bool
	done     bool
	err      error
	msg      []byte
	read     int64
	// rate is the body's account against Timeouts.BodyMinRate.
	rate bodyRate
	// h2 is the HTTP/2 stream whose DATA frames are the body (c is nil
	// then).
	h2 *h2stream
	// h3 is the HTTP/3 stream whose DATA frames are the body (h3stream.go).
	h3 *h3stream
}

func (b *bodyReader) reset(kind phttp.BodyKind, contentLength int64, bodyStart int, maxBody int64) {
	b.kind = kind
	b.ds, b.de, b.bodyStart = 0, 0, bodyStart
	b.finished, b.err, b.msg, b.read = false, nil, nil, 0
	b.rate = bodyRate{}
	b.done = kind != phttp.BodyLength && kind != phttp.BodyChunked
	switch kind {
	case phttp.BodyLength:
		b.length.Reset(contentLength)
		b.done = contentLength == 0
	case phttp.BodyChunked:
		b.chunked.Reset()
		b.chunked.MaxBody = maxBody
	}
}

// Read implements io.Reader.
func (b *bodyReader) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if b.done {
		return 0, io.EOF
	}
	if len(p) == 0 {
		return 0, nil
	}
	if b.c == nil {
		if b.h2 != nil {
			return b.h2.read(b, p)
		}
		if b.h3 != nil {
			return b.h3.read(b, p)
		}
		n := copy(p, b.msg)
		b.msg = b.msg[n:]
		b.read += int64(n)
		b.done = len(b.msg) == 0
		return n, nil
	}
	if b.kind == phttp.BodyLength {
		return b.readLength(p)
	}
	if err := b.fill(); err != nil {
		if err == io.EOF {
			b.done = true
		} else {
			b.err = err
		}
		return 0, err
	}
	n := copy(p, b.c.rbuf[b.ds:b.de])
	b.ds += n
	b.read += int64(n)
	return n, nil
}

func (b *bodyReader) readLength(p []byte) (int, error) {
	c := b.c
	if c.r < c.w {
		end := min(c.w, c.r+len(p))
		n, done := b.length.Decode(c.rbuf[c.r:end])
		copy(p, c.rbuf[c.r:c.r+n])
		c.r += n
		b.read += int64(n)
		b.done = done
		return n, nil
	}
	if err := c.expectContinue(); err != nil {
		b.err = err
		return 0, err
	}
	// Read past the buffer straight into p, but never beyond the body:
	// the bytes after it belong to the next pipelined request.
	if rem := b.length.Remaining(); int64(len(p)) > rem {
		p = p[:rem]
	}
	c.setBodyReadDeadline(time.Now())
	n, err := c.st.Read(p)
	b.rate.got += int64(n)
	_, b.done = b.length.Decode(p[:n])
	b.read += int64(n)
	if err != nil && !b.done {
		c.broken = true
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		b.err = err
		return n, err
	}
	return n, nil
}

// fill makes rbuf[ds:de] non-empty, or returns io.EOF at the end of a
// chunked body, or the decoding or stream error.
func (b *bodyReader) fill() error {
	c := b.c
	for b.ds == b.de {
		if b.finished {
			return io.EOF
		}
		if c.r < c.w {
			n, consumed, err := b.chunked.Decode(c.rbuf[c.r:c.w])
			b.ds, b.de = c.r, c.r+n
			c.r += consumed
			switch {
			case err == nil:
				b.finished = true
				continue
			case err != phttp.ErrNeedMore:
				c.broken = true
				return err
			case n > 0 || consumed > 0:
				continue
			}
		}
		// The decoder needs more input. Everything before rbuf[r:w] in
		// the body region has been delivered: move the partial line back
		// to the start of the body to make room.
		if c.r > b.bodyStart {
			poison(c.rbuf[b.bodyStart:c.r])
			c.w = b.bodyStart + copy(c.rbuf[b.bodyStart:], c.rbuf[c.r:c.w])
			c.r = b.bodyStart
		}
		if err := c.readMore(); err != nil {
			return err
		}
	}
	return nil
}

// discard reads and drops the rest of the body, up to limit bytes.
func (b *bodyReader) discard(limit int64) error {
	if b.err != nil {
		return b.err
	}
	c := b.c
	if c == nil {
		b.done = true
		return nil
	}
	start := b.read
	for !b.done {
		if b.read-start > limit {
			return errDrainLimit
		}
		switch b.kind {
		case phttp.BodyLength:
			if c.r < c.w {
				n, done := b.length.Decode(c.rbuf[c.r:c.w])
				c.r += n
				b.read += int64(n)
				b.done = done
				continue
			}
			// Nothing of the next request is buffered (r == w), so the
			// body region of rbuf can take the discarded bytes.
			if c.w == len(c.rbuf) {
				c.r, c.w = b.bodyStart, b.bodyStart
				if c.w == len(c.rbuf) {
					c.grow(2 * len(c.rbuf))
				}
			}
			_, err := b.readLength(c.rbuf[c.w:])
			if err != nil {
				return err
			}
		default:
			err := b.fill()
			if err == io.EOF {
				b.done = true
				break
			}
			if err != nil {
				b.err = err
				return err
			}
			b.read += int64(b.de - b.ds)
			b.ds = b.de
		}
	}
	return nil
}

var errDrainLimit = errors.New("server: unread request body too large to drain")

// StatusFor returns the status to answer a request whose body failed with
// err: 413 for a body over the limit, 400 for malformed framing, 408 when
// the client stalled (timeout), 400 otherwise.
func StatusFor(err error) int {
	var ne interface{ Timeout() bool }
	if errors.As(err, &ne) && ne.Timeout() {
		return 408
	}
	return phttp.StatusFor(err)
}
