package server

import (
	"strconv"

	"golang.org/x/net/http2"

	"github.com/simdedge/simdedge/internal/ascii"
)

// h2OutHigh is how many response bytes a stream's goroutine handler may
// have waiting for window before its writes wait: the same bound as an
// HTTP/1.1 connection's output (flushThreshold).
const h2OutHigh = flushThreshold

// commitH2 sends the response head as a HEADERS frame (ResponseWriter.commit
// for an HTTP/2 stream): the status and fields as HPACK, Content-Length
// when known, no Connection or Transfer-Encoding (§8.2.2). final: the
// handler returned, so the held body is all of it.
func (w *ResponseWriter) commitH2(final bool) {
	w.committed = true
	s := w.h2
	s.begun.Store(true)
	clen, noBody := w.streamLength(final)
	end := final && (noBody || len(w.body) == 0 && w.h2Trailers() == nil)
	s.writeHead(w, clen, end)
	body := w.body
	w.body = w.body[:0]
	*w.out = append(*w.out, body...)
}

// writeHead encodes and sends the response head.
func (s *h2stream) writeHead(w *ResponseWriter, clen int64, end bool) {
	hc := s.hc
	hc.mu.Lock()
	defer hc.mu.Unlock()
	if s.closed || hc.dead {
		return
	}
	hc.enc.begin()
	w.encodeHead(&hc.enc, clen)
	hc.writeBlock(s.id, hc.enc.buf, end)
	if end {
		s.localDone = true
		hc.localEnded(s)
	}
}

// writeBlock sends a header block as HEADERS and, beyond the client's
// frame size, CONTINUATION frames (§6.10); under mu.
func (hc *h2conn) writeBlock(id uint32, block []byte, end bool) {
	first := true
	for first || len(block) > 0 {
		n := min(len(block), hc.peerFrame)
		frag := block[:n]
		block = block[n:]
		if first {
			hc.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: frag, EndStream: end, EndHeaders: len(block) == 0})
			first = false
		} else {
			hc.fr.WriteContinuation(id, len(block) == 0, frag)
		}
	}
}

// h2LowerName returns the lowercase form of a field name, a constant for
// the common ones (the HPACK encoder keeps the strings it indexes).
func h2LowerName(b []byte) string {
	for _, n := range h2CommonNames {
		if len(n) == len(b) && ascii.EqualFold(n, bytesView(b)) {
			return n
		}
	}
	l := make([]byte, len(b))
	for i, c := range b {
		l[i] = ascii.Lower(c)
	}
	return string(l)
}

var h2CommonNames = []string{"content-type", "content-length", "cache-control", "server", "etag",
	"last-modified", "location", "set-cookie", "vary", "content-encoding", "x-request-id", "via",
	"accept-ranges", "expires", "strict-transport-security", "alt-svc"}

// h2Status is the :status value of a code (100-999, as WriteHeader
// allows).
func h2Status(code int) string {
	if code >= minStatus && code <= maxStatus {
		return h2StatusText[code]
	}
	return "500"
}

var h2StatusText = func() []string {
	t := make([]string, maxStatus+1)
	for code := minStatus; code <= maxStatus; code++ {
		t[code] = strconv.Itoa(code)
	}
	return t
}()

// flushOut implements sink for an HTTP/2 stream: the body bytes the
// handler wrote (wbuf) join the stream's output, which goes out as the
// flow-control windows allow. A goroutine handler waits while more than
// h2OutHigh bytes wait (back-pressure), under the Write timeout; an inline
// one never waits: the reader sends the rest as window updates arrive.
func (s *h2stream) flushOut(final bool) error {
	hc := s.hc
	w := &s.resp
	hc.mu.Lock()
	defer hc.mu.Unlock()
	if s.closed || hc.dead {
		s.wbuf = s.wbuf[:0]
		if s.rerr != nil {
			return s.rerr
		}
		return errH2ConnClosed
	}
	if w.aborted || final && w.clen >= 0 && w.written != w.clen && w.bodyAllowed() {
		// A truncated body: the client must not take it as whole.
		s.wbuf = s.wbuf[:0]
		hc.resetStream(s.id, w.h2ResetCode())
		hc.out.Flush()
		return nil
	}
	if s.outR == len(s.out) {
		s.out, s.wbuf, s.outR = s.wbuf, s.out[:0], 0
	} else {
		s.out = append(s.out, s.wbuf...)
		s.wbuf = s.wbuf[:0]
	}
	if final && !s.localDone {
		s.endPending = true
	}
	if !s.queued && (s.outR < len(s.out) || s.endPending) {
		s.queued = true
		hc.sending = append(hc.sending, s)
	}
	hc.pump()
	if !final && !s.inline {
		hc.wait(hc.c.cfg.Timeouts.Write, func() bool { return len(s.out)-s.outR <= h2OutHigh || s.closed })
		if len(s.out)-s.outR > h2OutHigh && !s.closed && !hc.dead {
			// The client gave no window for Write: give up on it.
			hc.resetStream(s.id, http2.ErrCodeFlowControl)
		}
	}
	if !s.inline && !final {
		// An inline handler runs on the reader, which flushes once it
		// has no more input buffered: responses to a batch of
		// requests go out in one write. A goroutine handler's last
		// frames are flushed when it ends (runStream), with those of
		// the handlers that end with it.
		hc.out.Flush()
	}
	if s.closed && !s.localDone {
		return s.rerr
	}
	return nil
}

// pump writes what the windows allow of every waiting stream's output as
// DATA frames (§6.9); under mu.
func (hc *h2conn) pump() {
	if hc.dead {
		return
	}
	for i := 0; i < len(hc.sending); {
		s := hc.sending[i]
		for s.outR < len(s.out) && hc.sendConn > 0 && s.sendWin > 0 {
			n := min(int64(len(s.out)-s.outR), hc.sendConn, s.sendWin, int64(hc.peerFrame))
			p := s.out[s.outR : s.outR+int(n)]
			s.outR += int(n)
			end := s.endPending && s.outR == len(s.out) && s.resp.h2Trailers() == nil
			hc.fr.WriteData(s.id, end, p)
			hc.sendConn -= n
			hc.sentData += n
			s.sendWin -= n
			if end {
				s.localDone = true
			}
		}
		if s.outR < len(s.out) {
			i++
			continue
		}
		s.out, s.outR = s.out[:0], 0
		if s.endPending && !s.localDone {
			if tr := s.resp.h2Trailers(); tr != nil {
				// Trailers end the stream as a last HEADERS (§8.1).
				hc.enc.begin()
				encodeLines(&hc.enc, tr)
				hc.writeBlock(s.id, hc.enc.buf, true)
			} else {
				hc.fr.WriteData(s.id, true, nil) // an empty DATA needs no window
			}
			s.localDone = true
		}
		hc.sending = append(hc.sending[:i], hc.sending[i+1:]...)
		s.queued = false
		if s.localDone {
			hc.localEnded(s)
		}
	}
	hc.cond.Broadcast()
}

// h2Trailers returns the trailer fields the handler set (EnableTrailers,
// AddTrailer: trailers.go), as "Name: value\r\n" lines; nil when there are
// none. They go out as the stream's last HEADERS frame.
func (w *ResponseWriter) h2Trailers() []byte {
	if !w.trailerOK || len(w.trailers) == 0 {
		return nil
	}
	return w.trailers
}
