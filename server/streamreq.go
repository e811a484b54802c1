package server

import (
	"bytes"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/simdedge/simdedge/internal/ascii"
)

// streamReq is the request of one stream of a multiplexed connection, an
// HTTP/2 stream (h2stream) or an HTTP/3 one (h3stream), as its handler
// sees it: each protocol's stream embeds one, and runs its handler through
// serve, so that a request is begun, answered, counted and logged the same
// way whatever protocol carried it (a new protocol plugs in here instead
// of bringing a copy). What differs between the protocols is their I/O,
// and it stays behind two hooks that each stream fills in: the
// ResponseWriter's sink (flushOut: response bytes out as frames) and the
// body reader's read (request bytes in, h2stream.read and h3stream.read).
type streamReq struct {
	req  Request
	resp ResponseWriter
	// hbuf holds the decoded fields the head's views point into: HPACK
	// and QPACK code their strings, so no wire byte is the field itself.
	hbuf []byte
	// wbuf takes the handler's body bytes, which the sink frames.
	wbuf []byte
	// rate is the body's account against its minimum rate (bodyrate.go).
	rate streamRate
	// begun: the response head has gone out (commitH2, commitH3). The
	// body reader reads it to stop the minimum rate once the response has
	// begun, and may run on another goroutine than the handler that sets
	// it: a proxy's upstream client sends the request body while the
	// handler relays the response, so it is atomic where the
	// ResponseWriter's own committed is not.
	begun atomic.Bool
	// at is when the read that brought the request's head returned
	// (zero: serve reads the clock as the handler begins). The streams
	// of one read share it, and it saves a clock read per stream: about
	// 50 ns on this project's VMs, 4 % of an h2c request.
	at time.Time
}

// init ties the pooled stream's Request and ResponseWriter together, with
// out as the ResponseWriter's sink.
func (m *streamReq) init(out sink) {
	m.resp.sink = out
	m.resp.out = &m.wbuf
	// Compression reads the request's Compressor and Accept-Encoding, and
	// its encoder writes through encs (encode.go), as on a conn.
	m.resp.req, m.resp.encs.w = &m.req, &m.resp
}

// begin prepares the Request and ResponseWriter for a handler, on the
// connection c anchors (settings, request IDs, Alt-Svc); at is when the
// request's head was read (zero: not known).
func (m *streamReq) begin(c *conn, at time.Time) {
	m.at = at
	r := &m.req
	r.begin(nil, 0)
	r.body.c = nil
	r.identify() // the request ID (observe.go)
	m.resp.begin(&r.head, false)
	m.resp.setRequestID(r.id.rid, c.srv.opts.RequestID.Header)
	m.resp.altSvc = c.altSvc
	m.rate = streamRate{}
	m.begun.Store(false)
}

// serve runs h and completes the response, then counts the request and
// writes its access-log line on c's shards; false if h panicked (the
// protocol then resets the stream).
func (m *streamReq) serve(c *conn, h Handler) (ok bool) {
	defer func() {
		if p := recover(); p != nil {
			c.srv.opts.Logger.Error("handler panic; stream reset", "panic", p, "remote", m.req.remote)
			ok = false
		}
	}()
	begin := m.at
	if begin.IsZero() && (c.srv.opts.Metrics != nil || c.alog != nil) {
		begin = time.Now()
	}
	h.ServeEdge(&m.resp, &m.req)
	if err := m.req.body.err; err != nil {
		answerBodyError(&m.resp, err)
	}
	m.resp.now = m.endTime()
	m.resp.finish()
	m.count(c, begin)
	if a := c.alog; a != nil {
		writeAccess(a, &m.req, m.resp.status, max(m.req.head.ContentLength, 0), m.resp.written, m.resp.now, m.resp.now.Sub(begin))
	}
	return true
}

// endTime returns the time now. From at, when it is known and recent,
// it reads the monotonic clock alone, which costs half what time.Now
// does on these VMs (about 25 ns against 50): the wall time is at's plus
// what the monotonic clock counted since. Within streamRecent, a step
// of the wall clock (NTP, by hand) shows only in the Date and the log
// time of the requests that span it, never in a duration.
func (m *streamReq) endTime() time.Time {
	if !m.at.IsZero() {
		if d := time.Since(m.at); d < streamRecent {
			return m.at.Add(d)
		}
	}
	return time.Now()
}

// streamRecent bounds how long after at endTime derives the time from it.
const streamRecent = time.Second

// count counts the request like conn.count does an HTTP/1.1 one, from
// begin to the response's end (resp.now); several streams of a connection
// count into its shard at once (the counters are atomic).
func (m *streamReq) count(c *conn, begin time.Time) {
	if c.srv.opts.Metrics != nil {
		c.observe(&m.req, m.resp.status, m.resp.now.Sub(begin), max(m.req.head.ContentLength, 0), m.resp.written)
	}
}

// release readies the stream for its pool once its handler has returned:
// buffers that grew past maxPooledBuf are left to the GC.
func (m *streamReq) release() {
	m.req.end()
	m.req.srv, m.req.c, m.req.remote = nil, nil, nil
	m.resp.release()
	if cap(m.wbuf) > maxPooledBuf {
		m.wbuf = nil
	}
	if cap(m.hbuf) > maxPooledBuf {
		m.hbuf = nil
	}
}

// fieldEnc is a multiplexed protocol's field-section encoder: HPACK's
// (hpackEnc) or QPACK's (h3Block). The head's fields are chosen and
// ordered once, here, for both. A value may view a buffer the caller
// reuses (the handler's head, the date line): an encoder copies what it
// keeps past the call.
type fieldEnc interface {
	field(name, value string)
	// unique is field for a value that is new with every response (the
	// request ID, Content-Length): an encoder with a dynamic table keeps
	// it out, where it would only push out the fields that repeat.
	unique(name, value string)
}

// streamLength is what a stream's response head declares (commitH2,
// commitH3): its Content-Length (-1: none) and whether the response has
// no body at all. final: the handler returned, so the held body is all of
// it.
func (w *ResponseWriter) streamLength(final bool) (clen int64, noBody bool) {
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

// encodeHead encodes the response head's fields into f: :status, Date
// (unless the handler set one), the handler's fields after the route's
// edits, the request ID, Alt-Svc and Content-Length (clen >= 0), as
// commit writes them for HTTP/1.1.
func (w *ResponseWriter) encodeHead(f fieldEnc, clen int64) {
	f.field(":status", h2Status(w.status))
	if !w.hasDate {
		now := w.now
		if now.IsZero() {
			now = time.Now()
		}
		line := dateLine(now)
		f.field("date", bytesView(line[len("Date: "):len(line)-2]))
	}
	if w.editDrop != nil || w.editAdd != nil {
		w.applyEdit() // a route's response_headers (edit.go), as commit does
	}
	encodeLines(f, w.hdr)
	if len(w.rid) > 0 { // the request ID (observe.go), as commit writes it
		f.unique(strings.ToLower(w.ridName), bytesView(w.rid))
	}
	if w.altSvc != "" {
		f.field("alt-svc", w.altSvc)
	}
	if clen >= 0 {
		f.unique("content-length", strconv.FormatInt(clen, 10))
	}
}

// encodeLines encodes the "Name: value\r\n" lines a handler added (or
// trailers), with lowercase names, leaving out the connection-specific
// fields (RFC 9113 §8.2.2, RFC 9114 §4.2), and values without the
// whitespace around them (RFC 9113 §8.2.1 forbids it).
func encodeLines(f fieldEnc, hdr []byte) {
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
		f.field(name, bytesView(ascii.TrimOWS(line[colon+1:])))
	}
}
