package server

import (
	"errors"
	"io"
	"net"
	"net/netip"

	phttp "github.com/simdedge/simdedge/parse/http"
	"github.com/simdedge/simdedge/parse/json"
	"github.com/simdedge/simdedge/parse/json/body"
	"github.com/simdedge/simdedge/parse/url"
	"github.com/simdedge/simdedge/server/metrics"
)

// Request is one parsed request, handed to a Handler.
//
// Zero copy, and who owns a byte: every []byte a Request returns (Method,
// Target, Host, Headers, BodyBytes, and the strings of URL and JSON) is a
// view into a buffer owned by the transport — the connection's read buffer
// (kernel TCP), a UMEM frame (xdp), a registered memory region (rdma). The
// views are valid only until the handler returns; the buffer is then
// recycled for the next request. A handler that keeps anything longer must
// copy it (Clone, or append into its own buffer). Builds with the
// simdedgedebug tag overwrite released buffers with a poison byte, so a view
// kept too long reads garbage in tests instead of someone else's request.
//
// A Request is reused by its connection for the next request; it must not
// be used from other goroutines after the handler returns.
type Request struct {
	head phttp.Request
	raw  []byte // the head's bytes (for Clone)
	srv  *Server
	c    *conn // nil on a message transport or for a clone
	body bodyReader

	remote   net.Addr
	remoteIP []byte // cached text form of the client's IP, per connection
	// client is ClientIP's answer for the current request (clientOK).
	client   netip.Addr
	clientOK bool
	// clientText holds ClientIPText's answer when the client is not the
	// peer (a fixed array: no allocation per request).
	clientText [len("ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255")]byte
	// gateDone, gateStatus, gateRetry: the admission of the plan's gate
	// for the current request (Plan.admit), cleared when it ends.
	gateDone   bool
	gateStatus uint16
	gateRetry  uint32

	url     url.URL
	urlDone bool
	urlErr  error
	scratch []byte // absolute form of an origin-form target, for URL

	jp      *json.Parser
	bodyBuf []byte // holds a body that was not contiguous in the transport buffer
	full    []byte // the whole body once BodyBytes ran
	fullOK  bool

	// plan is the request's route, looked up once (plan.go); the route's
	// counters, the response's compression and the gate's verdict come
	// from it. It is cleared when the request ends, not when it begins:
	// the event loop looks the route up before the request begins.
	plan *Plan
	// edit is the route policy's memory (edit.go); sentTarget the
	// target before a rewrite (nil: not rewritten).
	edit       Edit
	sentTarget []byte
	// normBuf holds the normalised target when normalisation changed
	// it, and sentRaw the target as sent (nil: unchanged); paths.go.
	normBuf []byte
	sentRaw []byte
	// comp is the route's response compression, armed by the plan's
	// steps (encode.go), cleared at the end like plan.
	comp Compressor
	// id is the request's ID and upstream (observe.go).
	id identity
}

// routeMetrics are the counters the request is counted into when its
// response ends (Options.Metrics): its plan's (nil: Unmatched).
func (r *Request) routeMetrics() *metrics.Route {
	if r.plan == nil {
		return nil
	}
	return r.plan.Metrics
}

func (r *Request) begin(raw []byte, bodyStart int) {
	r.raw = raw
	r.clientOK = false
	r.urlDone, r.urlErr = false, nil
	r.full, r.fullOK = nil, false
	r.body.reset(r.head.Body, r.head.ContentLength, bodyStart, r.limits().MaxBodyBytes)
}

func (r *Request) end() {
	r.raw, r.full = nil, nil
	// ClientIP may run before begin (the loop's InlineHandler): the
	// next request must not see this one's answer.
	r.clientOK = false
	r.gateDone = false
	// The plan is cleared at the end, not at begin: the event loop
	// looks the route up before the request begins.
	r.plan = nil
	r.edit.RespDrop, r.edit.RespAdd = nil, nil // likewise (edit.go)
	r.sentTarget, r.sentRaw = nil, nil
	r.comp = nil
	r.id.rid, r.id.upstream, r.id.target, r.id.done = nil, "", "", false
	if cap(r.bodyBuf) > maxPooledBuf {
		r.bodyBuf = nil
	}
}

func (r *Request) release() {
	r.end()
	r.jp = nil // a parser holds tape memory sized by the largest body seen
}

// Method is the request method, case-sensitive (RFC 9110 §9.1).
func (r *Request) Method() []byte { return r.head.Method }

// Target is the request target as sent: origin form ("/p?q"), absolute
// form, authority form (CONNECT) or "*" (RFC 9112 §3.2).
func (r *Request) Target() []byte { return r.head.Target }

// Version is the request's HTTP version.
func (r *Request) Version() phttp.Version { return r.head.Version }

// Host is the Host field's value, nil if absent (HTTP/1.0).
func (r *Request) Host() []byte { return r.head.Host }

// Headers are the field lines in the order received.
func (r *Request) Headers() phttp.Headers { return r.head.Headers }

// Header returns the first field named name (ASCII case-insensitive).
func (r *Request) Header(name string) ([]byte, bool) { return r.head.Headers.Get(name) }

// Head is the parsed head with its framing (body kind, Content-Length,
// Connection, Expect, Upgrade). It must not be modified.
func (r *Request) Head() *phttp.Request { return &r.head }

// RemoteAddr is the client's address as the transport reports it.
func (r *Request) RemoteAddr() net.Addr { return r.remote }

// RemoteIP is the client's IP address in text form ("192.0.2.1", "::1"),
// or nil when the transport's address is not an IP address. It is computed
// once per connection and valid until the handler returns.
func (r *Request) RemoteIP() []byte {
	if len(r.remoteIP) == 0 && r.remote != nil {
		var ap netip.AddrPort
		switch a := r.remote.(type) {
		case *net.TCPAddr:
			ap = a.AddrPort()
		case *net.UDPAddr:
			ap = a.AddrPort()
		default:
			return nil
		}
		r.remoteIP = ap.Addr().Unmap().AppendTo(r.remoteIP[:0])
	}
	return r.remoteIP
}

// Body returns a reader for the request body, decoded from its framing
// (Content-Length or chunked). The first read of a request with
// "Expect: 100-continue" sends "100 Continue". A body larger than
// Limits.MaxBodyBytes fails with ErrBodyTooLarge. The reader is valid until
// the handler returns; an unread remainder is discarded by the server.
func (r *Request) Body() io.Reader { return &r.body }

// BodyLen returns the number of body bytes delivered so far.
func (r *Request) BodyLen() int64 { return r.body.read }

// BodyBytes reads the whole body and returns it. A Content-Length body
// already in the transport buffer is returned as a view without copying;
// otherwise it is gathered into a buffer the connection reuses. The result
// is valid until the handler returns. The body reader is then at EOF.
func (r *Request) BodyBytes() ([]byte, error) {
	if r.fullOK {
		return r.full, nil
	}
	if r.body.read > 0 {
		return nil, errBodyStarted
	}
	b := &r.body
	if c := b.c; c != nil && b.kind == phttp.BodyLength && !b.done {
		cl := int(b.length.Remaining())
		if c.w-c.r >= cl {
			r.full = c.rbuf[c.r : c.r+cl]
			b.length.Decode(r.full)
			c.r += cl
			b.read, b.done = int64(cl), true
			r.fullOK = true
			return r.full, nil
		}
	}
	if b.c == nil && b.h2 == nil && b.h3 == nil && !b.done {
		r.full, b.msg, b.read, b.done = b.msg, nil, int64(len(b.msg)), true
		r.fullOK = true
		return r.full, nil
	}
	// The buffer grows with the bytes that arrive (growBody), never to the
	// announced length up front: a Content-Length is only a claim.
	buf := r.bodyBuf[:0]
	limit := 0
	if b.kind == phttp.BodyLength {
		limit = int(b.length.Remaining())
	}
	max := r.limits().MaxBodyBytes
	for {
		if len(buf) == cap(buf) {
			buf = growBody(buf, limit)
		}
		n, err := b.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if max > 0 && int64(len(buf)) > max {
			return nil, ErrBodyTooLarge
		}
		if err == io.EOF || err == nil && b.done {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	r.bodyBuf = buf
	r.full, r.fullOK = buf, true
	return buf, nil
}

var (
	errBodyStarted  = errors.New("server: body already partly read")
	errNoURL        = errors.New("server: request target has no URL form")
	errNoHostForURL = errors.New("server: origin-form target without host")
)

// URL parses the target, lazily and once per request, as the URL Standard
// does (parse/url). An origin-form target is resolved against
// "http://" + Host. The URL's strings are views valid until the handler
// returns.
func (r *Request) URL() (*url.URL, error) {
	if r.urlDone {
		return &r.url, r.urlErr
	}
	r.urlDone = true
	t := r.head.Target
	switch {
	case len(t) > 0 && t[0] == '/':
		if len(r.head.Host) == 0 {
			r.urlErr = errNoHostForURL
			return nil, r.urlErr
		}
		r.scratch = append(append(append(r.scratch[:0], "http://"...), r.head.Host...), t...)
		r.urlErr = url.ParseInto(&r.url, bytesView(r.scratch), nil)
	case hasScheme(t):
		r.urlErr = url.ParseInto(&r.url, bytesView(t), nil)
	default:
		r.urlErr = errNoURL
	}
	if r.urlErr != nil {
		return nil, r.urlErr
	}
	return &r.url, nil
}

func hasScheme(t []byte) bool {
	for i, c := range t {
		switch {
		case c == ':':
			return i > 0
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', i > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'):
		default:
			return false
		}
	}
	return false
}

// JSON reads the body and parses it as JSON with parse/json, reusing the
// connection's parser. The Document is a view into the body, valid until
// the handler returns.
func (r *Request) JSON() (*json.Document, error) {
	b, err := r.BodyBytes()
	if err != nil {
		return nil, err
	}
	return r.jsonParser().Parse(b)
}

// ParsedBody reads the body and decodes it by its Content-Type with
// parse/json/body: JSON, NDJSON, FlatBuffers envelopes (verified) and HTML
// forms. The result is a view into the body, valid until the handler
// returns.
func (r *Request) ParsedBody() (body.Body, error) {
	b, err := r.BodyBytes()
	if err != nil {
		return body.Body{}, err
	}
	ct, _ := r.head.Headers.Get("Content-Type")
	return body.Parse(r.jsonParser(), ct, b)
}

func (r *Request) jsonParser() *json.Parser {
	if r.jp == nil {
		r.jp = json.NewParser(json.Options{})
	}
	return r.jp
}

// Clone returns a copy of the request head (method, target, headers) and,
// if BodyBytes has run, of the body, that owns its bytes and stays valid
// after the handler returns. It has no body reader: its Body reads the
// copied body or nothing.
func (r *Request) Clone() *Request {
	raw := append([]byte(nil), r.raw...)
	if r.body.h2 != nil || r.body.h3 != nil {
		raw = r.h2Raw() // an HTTP/2 head has no wire form to re-parse
	}
	n := &Request{srv: r.srv, remote: r.remote}
	if _, err := r.srv.settings().parser.ParseRequest(raw, &n.head); err != nil {
		// The same parser accepted these bytes a moment ago.
		panic("server: clone of an accepted head failed to parse: " + err.Error())
	}
	n.raw = raw
	if r.sentRaw != nil {
		// The clone shows the normalised target, as r did (paths.go).
		n.sentRaw = n.head.Target
		n.head.Target = append([]byte(nil), r.normBuf...)
	}
	// The ID, upstream and target go with the clone (owned copies).
	if r.id.rid != nil {
		n.id.rid = append([]byte(nil), r.id.rid...)
	}
	n.id.upstream, n.id.target, n.id.done = r.id.upstream, r.id.target, true
	n.body.reset(phttp.BodyNone, 0, 0, 0)
	if r.fullOK {
		n.full, n.fullOK = append([]byte(nil), r.full...), true
		n.body.kind, n.body.done, n.body.msg = phttp.BodyLength, len(n.full) == 0, n.full
	}
	return n
}
