package server

import (
	"time"

	"github.com/simdedge/simdedge/server/metrics"
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
// connection c anchors (settings, request IDs, Alt-Svc).
func (m *streamReq) begin(c *conn) {
	r := &m.req
	r.begin(nil, 0)
	r.body.c = nil
	r.identify() // the request ID (observe.go)
	m.resp.begin(&r.head, false)
	m.resp.setRequestID(r.id.rid, c.srv.opts.RequestID.Header)
	m.resp.altSvc = c.altSvc
	m.rate = streamRate{}
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
	var begin time.Time
	if c.srv.opts.Metrics != nil || c.alog != nil {
		begin = time.Now()
	}
	h.ServeEdge(&m.resp, &m.req)
	if err := m.req.body.err; err != nil {
		answerBodyError(&m.resp, err)
	}
	m.resp.now = time.Now()
	m.resp.finish()
	m.count(c, begin)
	if a := c.alog; a != nil {
		writeAccess(a, &m.req, m.resp.status, max(m.req.head.ContentLength, 0), m.resp.written, m.resp.now, m.resp.now.Sub(begin))
	}
	return true
}

// count counts the request like conn.count does an HTTP/1.1 one, from
// begin; several streams of a connection count into its shard at once
// (the counters are atomic).
func (m *streamReq) count(c *conn, begin time.Time) {
	mt := c.srv.opts.Metrics
	if mt == nil {
		return
	}
	rt := m.req.routeMetrics()
	if rt == nil {
		rt = mt.Unmatched()
	}
	h := &m.req.head
	rt.ObserveAt(c.shard, c.lst.Slot(), metrics.MethodIndex(h.Method), m.resp.status, time.Since(begin), max(h.ContentLength, 0), m.resp.written)
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
