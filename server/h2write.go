package server

import (
	"bytes"
	"strconv"
	"strings"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

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
	clen, noBody := w.framedLength(final)
	end := final && (noBody || len(w.body) == 0 && w.h2Trailers() == nil)
	s.writeHead(w, clen, end)
	body := w.body
	w.body = w.body[:0]
	*w.out = append(*w.out, body...)
}

// framedLength is the Content-Length a framed response (HTTP/2, HTTP/3)
// declares, -1 for none (the frames end the body), and whether it has no
// body at all (204, 304, a HEAD). final: the handler returned, so the
// held body is all of it.
func (w *ResponseWriter) framedLength(final bool) (clen int64, noBody bool) {
	clen = -1
	switch {
	case w.status == 204 || w.status == 304:
		noBody = true
	case w.coding == codingHead:
		noBody = true // a compressed GET would have had no known length
	case w.coding == codingOn:
		// The declared length was the identity body's (a file's
		// SendFile): the compressed one is known only at the end.
		if final {
			clen = int64(len(w.body))
		}
	case w.headReq:
		noBody = true
		if w.clen >= 0 {
			clen = w.clen
		} else if final {
			clen = w.written
		}
	case w.clen >= 0:
		clen = w.clen
	case final:
		clen = int64(len(w.body))
	}
	return clen, noBody
}

// writeHead encodes and sends the response head.
func (s *h2stream) writeHead(w *ResponseWriter, clen int64, end bool) {
	hc := s.hc
	hc.mu.Lock()
	defer hc.mu.Unlock()
	if s.closed || hc.dead {
		return
	}
	hc.ebuf.Reset()
	enc := hc.enc
	enc.WriteField(hpack.HeaderField{Name: ":status", Value: h2Status(w.status)})
	if !w.hasDate {
		now := w.now
		if now.IsZero() {
			now = time.Now()
		}
		line := dateLine(now)
		enc.WriteField(hpack.HeaderField{Name: "date", Value: string(line[len("Date: ") : len(line)-2])})
	}
	if w.editDrop != nil || w.editAdd != nil {
		w.applyEdit() // a route's response_headers (edit.go), as commit does
	}
	h2EncodeLines(enc, w.hdr)
	if len(w.rid) > 0 { // the request ID (observe.go), as commit writes it
		enc.WriteField(hpack.HeaderField{Name: strings.ToLower(w.ridName), Value: string(w.rid)})
	}
	if w.altSvc != "" {
		enc.WriteField(hpack.HeaderField{Name: "alt-svc", Value: w.altSvc})
	}
	if clen >= 0 {
		enc.WriteField(hpack.HeaderField{Name: "content-length", Value: strconv.FormatInt(clen, 10)})
	}
	hc.writeBlock(s.id, hc.ebuf.Bytes(), end)
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

// h2EncodeLines encodes the "Name: value\r\n" lines a handler added, with
// lowercase names (§8.2.1), leaving out the connection-specific fields
// a proxied response may carry (§8.2.2).
func h2EncodeLines(enc *hpack.Encoder, hdr []byte) {
	framedFields(hdr, func(name string, value []byte) {
		enc.WriteField(hpack.HeaderField{Name: name, Value: string(value)})
	})
}

// framedFields calls f with each field of the "Name: value\r\n" lines
// of hdr that a framed response (HTTP/2, HTTP/3) carries: the name in
// lowercase, the value without its leading white space; the
// connection-specific fields (RFC 9113 §8.2.2, RFC 9114 §4.2) are left
// out.
func framedFields(hdr []byte, f func(name string, value []byte)) {
	for len(hdr) > 0 {
		eol := bytes.IndexByte(hdr, '\n')
		if eol < 0 {
			return
		}
		line := hdr[:eol-1] // without CRLF
		hdr = hdr[eol+1:]
		colon := bytes.IndexByte(line, ':')
		if colon <= 0 {
			continue
		}
		name := h2LowerName(line[:colon])
		switch name {
		case "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade":
			continue
		}
		value := line[colon+1:]
		for len(value) > 0 && (value[0] == ' ' || value[0] == '\t') {
			value = value[1:]
		}
		f(name, value)
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
		hc.bw.Flush()
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
		hc.bw.Flush()
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
				hc.ebuf.Reset()
				h2EncodeLines(hc.enc, tr)
				hc.writeBlock(s.id, hc.ebuf.Bytes(), true)
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
