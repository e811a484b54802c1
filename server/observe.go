package server

import (
	"crypto/tls"
	"time"

	"github.com/simdedge/simdedge/server/accesslog"
	"github.com/simdedge/simdedge/server/metrics"
	"github.com/simdedge/simdedge/server/trace"
)

// Request identity and the access log (issue 22 phase 2). The engines call
// identify when a request begins and logAccess when its response ended,
// next to the metrics hooks (metrics.go); the proxies read RequestID and
// Traceparent when they write the head they forward (server/proxy).

// RequestIDOptions configure request IDs (Options.RequestID).
type RequestIDOptions struct {
	// Header is the field that carries the ID both ways ("X-Request-Id");
	// empty: no request IDs.
	Header string
	// Generate makes an ID for a request that brings none (or an invalid
	// one: trace.ValidRequestID). Without it such a request has none.
	Generate bool
}

// TraceOptions configure W3C Trace Context propagation (Options.Trace):
// the proxies forward traceparent with their own span ID and tracestate
// with it, drop both when traceparent is invalid, and with Generate start
// a trace for a request that brings none.
type TraceOptions struct {
	Propagate bool
	Generate  bool
}

// identity is a request's ID and upstream (Request fields).
type identity struct {
	// rid is the request ID (a view into the head, or ridBuf): nil when
	// request IDs are off. done says identify ran for this request: a
	// route policy may ask for the ID ({request_id}) before the engine
	// begins the request (the loop looks routes up first), and both must
	// see the same one.
	rid    []byte
	ridBuf []byte
	done   bool
	// gen numbers the generated IDs of the Request's owner: a connection,
	// a message exchange or a pooled HTTP/2 stream (Reset per connection).
	gen trace.IDGen
	// upstream and target name what served a proxied request (SetUpstream).
	upstream, target string
}

// RequestID is the request's ID (Options.RequestID): the client's if valid,
// else a generated one, else nil. Valid until the handler returns.
func (r *Request) RequestID() []byte {
	if !r.id.done {
		r.identify()
	}
	return r.id.rid
}

// SetUpstream records the upstream and target that serve the request, for
// the access log. The strings are the pool's, not copied.
func (r *Request) SetUpstream(upstream, target string) {
	r.id.upstream, r.id.target = upstream, target
}

// TraceOptions are the server's trace-context rules (the proxies apply
// them to the heads they forward).
func (r *Request) TraceOptions() TraceOptions {
	if r.srv == nil {
		return TraceOptions{}
	}
	return r.srv.opts.Trace
}

// RequestIDHeader is the field carrying request IDs ("" when off).
func (r *Request) RequestIDHeader() string {
	if r.srv == nil {
		return ""
	}
	return r.srv.opts.RequestID.Header
}

// CountShard is the metrics shard the request counts into (upstream
// latency per target, server/proxy), or -1 when counting is off.
func (r *Request) CountShard() int {
	if r.c == nil || r.c.lst == nil {
		return -1
	}
	return r.c.shard
}

// identify sets the request's ID from the header or the owner's generator,
// once per request (end clears it, with the upstream and target).
func (r *Request) identify() {
	if r.id.done {
		return
	}
	r.id.done, r.id.rid = true, nil
	if r.srv == nil {
		return
	}
	o := &r.srv.opts.RequestID
	if o.Header == "" {
		return
	}
	if v, ok := r.head.Headers.Get(o.Header); ok && trace.ValidRequestID(v) {
		r.id.rid = v
		return
	}
	if o.Generate {
		r.id.ridBuf = r.id.gen.Append(r.id.ridBuf[:0])
		r.id.rid = r.id.ridBuf
	}
}

// logOpen gives a new connection its access-log shard.
func (c *conn) logOpen() {
	if l := c.srv.opts.AccessLog; l != nil {
		c.alog = l.Next()
	} else {
		c.alog = nil
	}
	c.req.id.gen.Reset()
}

// logAccess writes the line of the request that just ended (c.now is its
// end). Call before c.req.end.
func (c *conn) logAccess() {
	if c.alog == nil {
		return
	}
	in := int64(len(c.req.raw))
	if h := &c.req.head; h.ContentLength > 0 {
		in += h.ContentLength
	}
	writeAccess(c.alog, &c.req, c.resp.status, in, c.resp.written, c.now, c.now.Sub(c.reqBegin))
}

// writeAccess fills an entry from r and writes it to s.
func writeAccess(s *accesslog.Shard, r *Request, status int, in, out int64, end time.Time, d time.Duration) {
	h := &r.head
	e := accesslog.Entry{
		Time: end, Duration: d,
		Remote: r.RemoteIP(), Method: h.Method, Host: h.Host, Target: r.SentTarget(),
		Proto: protoOf(r), Status: status, BytesIn: in, BytesOut: out,
		Upstream: r.id.upstream, UpstreamTarget: r.id.target, RequestID: r.id.rid,
	}
	if rt := r.routeMetrics(); rt != nil {
		e.Route = rt.Name()
	} else {
		e.Route = metrics.UnmatchedRoute
	}
	e.UserAgent, _ = h.Headers.Get("User-Agent")
	if s.WantsReferer() { // only the combined format has it: a scan saved
		e.Referer, _ = h.Headers.Get("Referer")
	}
	if cs, ok := r.tlsVersion(); ok {
		e.TLS = tlsNames(cs)
	}
	s.Write(&e)
}

// tlsVersion is the negotiated TLS version of the request's connection.
func (r *Request) tlsVersion() (uint16, bool) {
	if r.c == nil {
		return 0, false
	}
	if h, ok := r.c.st.(h3connStream); ok {
		return h.qc.ConnectionState().TLS.Version, true
	}
	t, ok := r.c.st.(tlsConnStream)
	if !ok || t.tlsConn() == nil {
		return 0, false
	}
	return t.tlsConn().ConnectionState().Version, true
}

// tlsNames names TLS versions as the log writes them ("TLS1.3").
func tlsNames(v uint16) string {
	switch v {
	case tls.VersionTLS13:
		return "TLS1.3"
	case tls.VersionTLS12:
		return "TLS1.2"
	case tls.VersionTLS11:
		return "TLS1.1"
	case tls.VersionTLS10:
		return "TLS1.0"
	}
	return "TLS"
}

// setRequestID makes the response carry the request's ID in the field
// name (nothing when id is empty).
func (w *ResponseWriter) setRequestID(id []byte, name string) {
	w.rid, w.ridName = id, name
}

// logAccess writes the line of a message exchange that began at start
// (messages take the clock only for the log: they have no metrics hooks).
func (x *exchange) logAccess(start time.Time, in int64) {
	l := x.srv.opts.AccessLog
	if l == nil {
		return
	}
	if x.alogOf != l {
		x.alog, x.alogOf = l.Next(), l
	}
	end := time.Now()
	writeAccess(x.alog, &x.req, x.resp.status, in, x.resp.written, end, end.Sub(start))
}

// protoOf is the protocol the request came in: an HTTP/2 stream's head says
// HTTP/1.1 (h2request.go), so that handlers see familiar framing.
func protoOf(r *Request) string {
	if r.HTTP2() {
		return "HTTP/2.0"
	}
	if r.HTTP3() {
		return "HTTP/3.0"
	}
	return r.head.Version.String()
}
