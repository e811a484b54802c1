package server

import (
	"time"

	"github.com/simdedge/simdedge/server/metrics"
)

// The counting hooks of Options.Metrics (server/metrics). Each is a nil
// check when metrics are off; with them on, a request costs one clock read
// (its start: the end shares endRequest's) and a handful of atomic adds on
// the connection's own shard.

// countOpen counts a new connection on its listener's counters (nil:
// metrics off) and gives it its shard.
func (c *conn) countOpen(l *metrics.Listener) {
	if l != nil {
		c.lst, c.shard = l, c.srv.opts.Metrics.Shard()
		l.Opened(c.shard)
	}
}

// beginCount notes when a request's head was complete (for the metrics'
// histogram and the access log's duration).
func (c *conn) beginCount() {
	if c.srv.opts.Metrics != nil || c.alog != nil {
		if c.evBegin.IsZero() {
			c.reqBegin = time.Now()
		} else {
			c.reqBegin, c.evBegin = c.evBegin, time.Time{}
		}
	}
}

// count counts the request that started at just
// ended (c.now is its end) into its route's counters. Bytes in are the
// head and a declared body length (a chunked body's size is not known
// without counting every read: phase 2); bytes out are the body bytes
// written.
func (c *conn) count() {
	if c.srv.opts.Metrics == nil {
		return
	}
	in := int64(len(c.req.raw))
	if n := c.req.head.ContentLength; n > 0 {
		in += n
	}
	c.observe(&c.req, c.resp.status, c.now.Sub(c.reqBegin), in, c.resp.written)
}

// observe counts r, answered status after took, with in and out bytes,
// into its route's counters (or the unmatched ones) on c's shard: an
// HTTP/1.1 request (count) or a stream's (streamReq.count).
func (c *conn) observe(r *Request, status int, took time.Duration, in, out int64) {
	m := c.srv.opts.Metrics
	if m == nil {
		return
	}
	rt := r.routeMetrics()
	if rt == nil {
		rt = m.Unmatched()
	}
	rt.ObserveAt(c.shard, c.lst.Slot(), metrics.MethodIndex(r.head.Method), status, took, in, out)
}
