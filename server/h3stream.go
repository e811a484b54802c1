package server

import (
	"context"
	"errors"
	"io"
	"os"
	"sync"
	"time"

	"github.com/quic-go/qpack"
	"github.com/quic-go/quic-go"

	phttp "github.com/simdedge/simdedge/parse/http"
	"github.com/simdedge/simdedge/server/access"
	"github.com/simdedge/simdedge/server/metrics"
)

// h3stream is one request stream and its response, with the Request and
// ResponseWriter its handler sees; it belongs to the stream's goroutine.
//
// What is copied, and why: as on HTTP/2 (h2stream), QPACK fields arrive
// coded (Huffman strings, static-table references), so the decoded fields
// are copied into hd.buf, which becomes hbuf, and the head's views point
// there. Body bytes are read from quic-go's stream straight into the
// handler's slice (beyond the first read's buffer), and response bytes are
// written from the ResponseWriter's buffer behind a DATA frame head.
type h3stream struct {
	hc *h3conn
	qs *quic.Stream
	// rs is qs's receive side (a fake in the fuzz test, which has no
	// QUIC connection: hc.qc and qs are nil there).
	rs h3RecvStream

	// streamReq is the Request and ResponseWriter (streamreq.go); its
	// hbuf takes the decoded fields, its wbuf the handler's body bytes.
	streamReq
	hd h2decode
	// block holds a header block longer than fr's buffer.
	block []byte
	fr    h3Reader
	// obuf gathers the frames of one write (HEADERS, DATA heads, small
	// DATA payloads); blk encodes field sections (h3write.go).
	obuf []byte
	blk  h3Block
	// left is what remains of the DATA frame being read; got counts body
	// bytes, declLen is the Content-Length (-1: none).
	left    uint64
	got     int64
	declLen int64
	// werr fails the handler's writes once the stream is reset or the
	// connection gone.
	werr error
	// gone stops the OnStreamGone watch.
	gone func() bool
	// early: the request came in 0-RTT data.
	early bool
}

// h3RecvStream is what a request stream's reading needs of quic-go's
// stream.
type h3RecvStream interface {
	io.Reader
	SetReadDeadline(time.Time) error
	CancelRead(quic.StreamErrorCode)
}

var h3streamPool = sync.Pool{New: func() any {
	s := &h3stream{}
	s.init(s)
	s.resp.h3 = s
	s.req.body.h3 = s
	return s
}}

var (
	errH3StreamReset = errors.New("server: http3 stream reset")
	// errH3Malformed is a request that breaks RFC 9114 §4.1.2.
	errH3Malformed = errors.New("server: malformed http3 request")
)

// serveStream serves one request stream, from its HEADERS frame to the
// end of the response.
func (hc *h3conn) serveStream(qs *quic.Stream) {
	defer hc.streamEnded()
	s := h3streamPool.Get().(*h3stream)
	s.hc, s.qs, s.rs = hc, qs, qs
	s.fr.reset(qs)
	defer hc.putStream(s)
	s.resetState()
	c := hc.c
	if t := c.timeouts().ReadHeader; t > 0 {
		qs.SetReadDeadline(time.Now().Add(t))
	}
	code, err := s.readHead()
	qs.SetReadDeadline(time.Time{})
	switch {
	case err == errH3Malformed:
		c.lst.HTTP3(c.shard, metrics.H3Error)
		qs.CancelRead(h3MessageError) // §4.1.2
		qs.CancelWrite(h3MessageError)
		return
	case err != nil:
		c.lst.HTTP3(c.shard, metrics.H3Error)
		if code != 0 {
			hc.qc.CloseWithError(code, "")
		} else {
			qs.CancelRead(h3RequestIncomplete)
			qs.CancelWrite(h3RequestIncomplete)
		}
		return
	}
	c.lst.HTTP3(c.shard, metrics.H3Stream)
	r := &s.req
	// The client's address as of this request: a QUIC connection moves
	// with its client (RFC 9000 §9), unlike the conn's, taken at accept.
	r.srv, r.c, r.remote = hc.srv, c, hc.qc.RemoteAddr()
	r.remoteIP = r.remoteIP[:0]
	if hc.o.Rules.Active() && hc.o.Rules.Check(addrIP(r.remote)) == access.Denied {
		qs.CancelRead(h3RequestRejected) // moved to a denied address
		qs.CancelWrite(h3RequestRejected)
		return
	}
	var h Handler
	switch {
	case s.hd.tooBig:
		// The field section was over MaxHeaderBytes: answered 431 as
		// an HTTP/1.1 head over the limit is.
		r.head.Reset()
		r.head.Method, r.head.Target, r.head.Version = h2ErrMethod, h2ErrTarget, phttp.HTTP11
		s.begin(c, time.Time{})
		h = h2TooLarge{}
	default:
		s.begin(c, time.Time{})
		switch {
		case r.normalizeTarget(c.paths) != nil: // paths.go
			h = pathRefused{}
		case s.early && !h3SafeMethod(r.head.Method):
			h = tooEarly{}
		default:
			h = r.planFor(hc.srv.router) // the route, looked up once (plan.go)
		}
	}
	ok := s.serve(c, h)
	s.stopGone() // h3write.go
	if !ok {
		qs.CancelWrite(h3InternalError)
	}
	if !s.fr.ended() {
		// §4.1: the response is complete; the client may stop sending
		// what is left of the body.
		qs.CancelRead(h3NoError)
	}
}

// resetState readies a pooled stream for a new request.
func (s *h3stream) resetState() {
	s.left, s.got, s.declLen, s.werr, s.gone, s.early = 0, 0, -1, nil, nil, false
	s.wbuf, s.obuf = s.wbuf[:0], s.obuf[:0]
	s.blk.reset()
}

// readHead reads frames up to the request's HEADERS (unknown ones are
// skipped, §9) and decodes it into s.hd, then builds the head. A
// connection error comes with its code; errH3Malformed is a stream error.
func (s *h3stream) readHead() (quic.ApplicationErrorCode, error) {
	fr := &s.fr
	max := uint64(s.hc.o.MaxHeaderBytes)
	skipped := uint64(0)
	for {
		typ, length, err := fr.next()
		if err != nil {
			if err == errH3Frame {
				return h3FrameError, err
			}
			return 0, err
		}
		switch {
		case typ == h3FrameHeaders:
			return s.decodeHead(length)
		case typ == h3FrameData:
			return h3FrameUnexpected, errH3Frame // §4.1: HEADERS first
		case typ == h3FrameSettings || typ == h3FrameGoaway || typ == h3FrameMaxPushID ||
			typ == h3FrameCancelPush || typ == h3FramePushPromise || h3FrameH2Only(typ):
			return h3FrameUnexpected, errH3Frame // §7.2: not on request streams
		}
		// Unknown frames before the head are bounded with it, so a
		// stream cannot hold a handler slot by sending them forever.
		skipped += length
		if skipped > max {
			return h3ExcessiveLoad, errH3FrameTooBig
		}
		if err := fr.skip(length); err != nil {
			return 0, err
		}
	}
}

// h3BlockSlack is how much an encoded field section may exceed
// MaxHeaderBytes, as h2BlockSlack for HPACK.
const h3BlockSlack = h2BlockSlack

// decodeHead decodes a HEADERS payload of length bytes through the
// checks HTTP/2's fields pass (h2decode.field), then builds the head.
func (s *h3stream) decodeHead(length uint64) (quic.ApplicationErrorCode, error) {
	fr := &s.fr
	max := s.hc.o.MaxHeaderBytes
	if length > uint64(max+h3BlockSlack) {
		return h3ExcessiveLoad, errH3FrameTooBig
	}
	var block []byte
	if int(length) <= len(fr.buf) {
		p, err := fr.payload(int(length))
		if err != nil {
			return h3FrameError, err
		}
		block = p
	} else {
		if cap(s.block) < int(length) {
			s.block = make([]byte, length)
		}
		block = s.block[:length]
		if err := fr.payloadInto(block); err != nil {
			return h3FrameError, err
		}
	}
	d := &s.hd
	d.reset(s.hbuf, false)
	if err := h3DecodeFields(d, block, max); err != nil {
		return h3QPACKDecompression, err
	}
	if d.tooBig {
		s.hbuf, d.buf = d.buf, nil
		return 0, nil
	}
	if fr.r == fr.w && !fr.eof && d.method.ns >= 0 && h3BodyUnusual(d.buf[d.method.vs:d.method.ve]) {
		// Clients write the FIN after HEADERS (quic-go's in a frame of
		// its own), so that it may arrive a moment later: wait for it
		// (or for a first body byte) at most h3FinWait, so that a GET
		// is not taken for one with a streamed body, which a proxy
		// would forward chunked. (A deadline already past would fail
		// the read even with bytes queued.)
		s.rs.SetReadDeadline(time.Now().Add(h3FinWait))
		fr.fill()
		if fr.err != nil && fr.err != io.EOF {
			fr.err = nil
		}
		s.rs.SetReadDeadline(time.Time{})
	}
	ok := !d.malformed && d.buildHead(&s.req.head, fr.ended())
	// The head's views point into d.buf: it becomes the stream's.
	s.hbuf, d.buf = d.buf, nil
	if !ok {
		return 0, errH3Malformed
	}
	s.declLen = d.declLen
	s.early = s.hc.qc != nil && !h3HandshakeDone(s.hc.qc)
	if s.early {
		// RFC 8470 §5.1: a request that came in early data says so to
		// the upstream, which may answer 425 itself.
		s.req.head.Headers = append(s.req.head.Headers, phttp.Header{Name: h3EarlyDataName, Value: h3EarlyDataValue})
	}
	return 0, nil
}

// h3FinWait bounds the wait for a FIN after HEADERS: a few packets'
// processing on a loaded host; it delays only the rare request of these
// methods that does stream a body.
const h3FinWait = 2 * time.Millisecond

// h3BodyUnusual: the methods whose requests carry no body in practice
// (RFC 9110 §9.3: a body has no defined meaning for them).
func h3BodyUnusual(m []byte) bool {
	switch string(m) {
	case "GET", "HEAD", "OPTIONS", "TRACE", "DELETE":
		return true
	}
	return false
}

var (
	h3EarlyDataName  = []byte("early-data")
	h3EarlyDataValue = []byte("1")
)

// h3DecodeFields runs the QPACK decoder over a field section and gives
// each field to d (static table and literals only: the connection allows
// no dynamic table).
func h3DecodeFields(d *h2decode, block []byte, max int) error {
	next := qpackDecoder.Decode(block)
	for {
		f, err := next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		d.field(f.Name, f.Value, max, false)
	}
}

// qpackDecoder has no state (no dynamic table): one serves every stream.
var qpackDecoder = qpack.NewDecoder()

// h3HandshakeDone reports whether the connection's handshake has
// completed (a request before it came in 0-RTT data).
func h3HandshakeDone(qc *quic.Conn) bool {
	select {
	case <-qc.HandshakeComplete():
		return true
	default:
		return false
	}
}

// h3SafeMethod: the methods RFC 9110 §9.2.1 calls safe, the only ones
// served from early data (RFC 8470 §5.1 leaves the choice to the server).
func h3SafeMethod(m []byte) bool {
	switch string(m) {
	case "GET", "HEAD", "OPTIONS", "TRACE":
		return true
	}
	return false
}

// tooEarly answers a request that may not run from early data (RFC 8470
// §5.2): the client repeats it after the handshake.
type tooEarly struct{}

func (tooEarly) ServeEdge(w *ResponseWriter, _ *Request) {
	w.WriteHeader(425)
	w.AddHeader("Content-Type", "text/plain; charset=utf-8")
	w.WriteString("Too Early\n")
}

// putStream returns s to the pool once its handler has returned.
func (hc *h3conn) putStream(s *h3stream) {
	s.hc, s.qs, s.rs = nil, nil, nil
	s.fr.src = nil
	s.release()
	for _, b := range []*[]byte{&s.obuf, &s.block} {
		if cap(*b) > maxPooledBuf {
			*b = nil
		}
	}
	h3streamPool.Put(s)
}

// read is the stream's body reader (bodyReader.Read): DATA payloads
// (§7.2.1), unknown frames skipped, trailers (a last HEADERS) dropped as
// on HTTP/2, under the Idle timeout and the body's minimum rate, as an
// HTTP/2 body read (streamRate.wait). The bytes received are those read
// from quic-go's stream, as on HTTP/1.1 those read from the socket.
func (s *h3stream) read(b *bodyReader, p []byte) (int, error) {
	fr := &s.fr
	now := time.Now()
	var dl time.Time
	if d := s.rate.wait(s.hc.c.timeouts(), now, s.got, s.begun.Load()); d > 0 {
		dl = now.Add(d)
	}
	s.rs.SetReadDeadline(dl)
	for s.left == 0 {
		typ, length, err := fr.next()
		switch {
		case err == io.EOF:
			if s.declLen >= 0 && s.got != s.declLen {
				return 0, s.fail(b, errH3Malformed) // §4.1.2
			}
			b.done = true
			return 0, io.EOF
		case err != nil:
			return 0, s.fail(b, err)
		case typ == h3FrameData:
			s.left = length
		case typ == h3FrameHeaders:
			// Trailers: dropped (the handler API has none for
			// requests); nothing may follow them.
			if length > uint64(s.hc.o.MaxHeaderBytes+h3BlockSlack) {
				return 0, s.fail(b, errH3FrameTooBig)
			}
			if err := fr.skip(length); err != nil {
				return 0, s.fail(b, err)
			}
			if _, _, err := fr.next(); err != io.EOF {
				return 0, s.fail(b, errH3Malformed)
			}
			if s.declLen >= 0 && s.got != s.declLen {
				return 0, s.fail(b, errH3Malformed)
			}
			b.done = true
			return 0, io.EOF
		case typ == h3FrameSettings || typ == h3FrameGoaway || typ == h3FrameMaxPushID ||
			typ == h3FrameCancelPush || typ == h3FramePushPromise || h3FrameH2Only(typ):
			s.hc.closeWithError(h3FrameUnexpected)
			return 0, s.fail(b, errH3Frame)
		default:
			if err := fr.skip(length); err != nil {
				return 0, s.fail(b, err)
			}
		}
	}
	if uint64(len(p)) > s.left {
		p = p[:s.left]
	}
	n, err := fr.read(p)
	s.left -= uint64(n)
	s.got += int64(n)
	b.read += int64(n)
	if s.declLen >= 0 && s.got > s.declLen {
		return n, s.fail(b, errH3Malformed)
	}
	if m := s.req.limits().MaxBodyBytes; m > 0 && b.read > m {
		b.err = ErrBodyTooLarge // answered 413; the rest is refused
		return n, b.err
	}
	if err != nil {
		return n, s.fail(b, err)
	}
	return n, nil
}

// fail records a body read's failure: a deadline is the body's timeout
// (408), a malformed body resets the stream (§4.1.2), a reset or a lost
// connection fails the handler's writes too.
func (s *h3stream) fail(b *bodyReader, err error) error {
	var se *quic.StreamError
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		err = errH3BodyTimeout
	case err == errH3Malformed || err == errH3Frame || err == errH3FrameTooBig:
		s.rs.CancelRead(h3MessageError)
		if s.qs != nil {
			s.qs.CancelWrite(h3MessageError)
		}
		s.werr = errH3StreamReset
	case errors.As(err, &se):
		s.werr = errH3StreamReset
		err = errH3StreamReset
	default:
		s.werr = err
	}
	b.err = err
	return err
}

// errH3BodyTimeout is a body read that waited Idle, or fell behind the
// body's minimum rate (408), a deadline error as HTTP/1.1's and HTTP/2's
// are.
var errH3BodyTimeout error = h3Timeout{}

type h3Timeout struct{}

func (h3Timeout) Error() string   { return "server: http3 request body timed out" }
func (h3Timeout) Timeout() bool   { return true }
func (h3Timeout) Temporary() bool { return true }
func (h3Timeout) Unwrap() error   { return os.ErrDeadlineExceeded }

// onGone is OnStreamGone for an HTTP/3 stream: f runs once if the client
// resets the stream (STOP_SENDING) or the connection ends while the
// handler runs.
func (s *h3stream) onGone(f func()) {
	if s.gone != nil {
		s.gone()
	}
	s.gone = context.AfterFunc(s.qs.Context(), f)
}
