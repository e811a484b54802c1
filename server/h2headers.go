package server

import (
	"strconv"

	"github.com/simdedge/simdedge/internal/ascii"
	phttp "github.com/simdedge/simdedge/parse/http"
	"golang.org/x/net/http2"
)

// h2decode is the state of one header block's decoding: the fields go
// into buf (a stream's, or scratch for trailers and refused streams) as
// offsets, because buf may grow while the block is decoded; the views are
// made once it is whole (h2stream.buildHead).
type h2decode struct {
	buf     []byte
	fields  []h2field
	cookies []h2field
	// pseudo-header values (offsets into buf, -1 when absent)
	method, path, authority, scheme h2field
	size                            int
	regular                         bool // a regular field was seen
	trailer                         bool
	malformed                       bool
	tooBig                          bool
	declLen                         int64
	// limit is the list size field bounds the block to, for emit.
	limit int
}

// emit takes one field from the HPACK decoder (an hpackSink).
func (d *h2decode) emit(name, value string, vetted bool) bool {
	return d.field(name, value, d.limit, vetted)
}

type h2field struct{ ns, ne, vs, ve int }

var h2absent = h2field{-1, -1, -1, -1}

func (d *h2decode) reset(buf []byte, trailer bool) {
	d.buf, d.fields, d.cookies = buf[:0], d.fields[:0], d.cookies[:0]
	d.method, d.path, d.authority, d.scheme = h2absent, h2absent, h2absent, h2absent
	d.size, d.regular, d.trailer, d.malformed, d.tooBig = 0, false, trailer, false, false
	d.declLen = -1
}

// onHeaders starts a header block (§6.2): a new stream's request head, or
// an open stream's trailers.
func (hc *h2conn) onHeaders(f *h2frame, ended bool) error {
	id := f.sid
	if id%2 == 0 {
		return h2ConnError(http2.ErrCodeProtocol) // §5.1.1: client streams are odd
	}
	hc.hstream, hc.hend = id, f.has(http2.FlagHeadersEndStream)
	hc.hprio = f.has(http2.FlagHeadersPriority) && f.dep == id
	hc.hblock = append(hc.hblock[:0], f.p...)
	if err := hc.checkBlock(); err != nil {
		return err
	}
	if ended {
		return hc.endHeaders()
	}
	return nil
}

// onContinuation adds to the header block (§6.10). The reader has checked
// that it follows HEADERS on the same stream.
func (hc *h2conn) onContinuation(f *h2frame, ended bool) error {
	hc.hblock = append(hc.hblock, f.p...)
	if err := hc.checkBlock(); err != nil {
		return err
	}
	if ended {
		return hc.endHeaders()
	}
	return nil
}

// h2BlockSlack is how much an encoded header block may exceed
// MaxHeaderListSize: HPACK's encoding of a field is at most a few bytes
// longer than the field (length prefixes, Huffman's worst case aside), and
// the list size already counts 32 bytes per field.
const h2BlockSlack = 4 << 10

// checkBlock bounds the encoded header block before anything decodes it
// (the CONTINUATION flood, CVE-2024-27316: a block that never ends).
func (hc *h2conn) checkBlock() error {
	if len(hc.hblock) > hc.lim.MaxHeaderListSize+h2BlockSlack {
		return h2ConnError(http2.ErrCodeEnhanceYourCalm)
	}
	return nil
}

// endHeaders decodes the complete header block and acts on it.
func (hc *h2conn) endHeaders() error {
	id := hc.hstream
	hc.mu.Lock()
	defer hc.mu.Unlock()
	if hc.dead {
		return errH2ConnClosed
	}
	var s *h2stream
	trailer := false
	switch {
	case id > hc.lastID:
		hc.lastID = id
		s = hc.newStream(id)
		hc.hd.reset(s.hbuf, false)
	default:
		s = hc.streams[id]
		trailer = true
		hc.hd.reset(hc.hd.buf, true) // scratch: trailers are not kept
	}
	if err := hc.decodeBlock(); err != nil {
		if s != nil && !trailer {
			hc.putStream(s)
		}
		return err
	}
	if trailer {
		return hc.onTrailers(s)
	}
	return hc.openStream(s)
}

// decodeBlock runs the HPACK decoder over the block; its state must
// advance even for a block the server then refuses (§4.3).
func (hc *h2conn) decodeBlock() error {
	hc.hd.limit = hc.lim.MaxHeaderListSize
	if err := hc.dec.decode(hc.hblock, &hc.hd); err != nil {
		return h2ConnError(http2.ErrCodeCompression)
	}
	return nil
}

// onTrailers ends a request body with trailers (§8.1). They must end the
// stream and carry no pseudo-header. Request trailers are dropped: the
// handler API has no way to read them (the trailer API is for responses).
func (hc *h2conn) onTrailers(s *h2stream) error {
	if s == nil {
		// HEADERS on a stream that is not open: a closed one, or one
		// below the last that was never used. §5.1.1 makes any
		// identifier not greater than the last a PROTOCOL_ERROR.
		return h2ConnError(http2.ErrCodeProtocol)
	}
	if s.remoteDone {
		hc.resetStream(s.id, http2.ErrCodeStreamClosed)
		return nil
	}
	if !hc.hend || hc.hd.malformed {
		hc.resetStream(s.id, http2.ErrCodeProtocol)
		return nil
	}
	if s.declLen >= 0 && s.got != s.declLen {
		hc.resetStream(s.id, http2.ErrCodeProtocol)
		return nil
	}
	hc.remoteEnded(s)
	hc.cond.Broadcast()
	return nil
}

// field checks one decoded field against RFC 9113 §8.2 and §8.3 (RFC
// 9114 §4.2 and §4.3 say the same for HTTP/3, whose QPACK fields come
// here too): lowercase names, pseudo-headers first, known and once, no
// connection-specific fields. The running size bounds what is kept (the
// HPACK bomb: a small block naming a big table entry many times): past
// limit nothing more is copied.
//
// vetted: the name and value were found sound before (an HPACK table
// entry's), so only the checks that depend on the rest of the list run.
// It reports whether they are sound (a valid value, and a valid name for
// a regular field), when it got as far as checking: false once the list
// is malformed or too big.
func (d *h2decode) field(name, value string, limit int, vetted bool) (sound bool) {
	if d.malformed || d.tooBig {
		return false
	}
	d.size += len(name) + len(value) + h2FieldOverhead
	if d.size > limit {
		d.tooBig = true
		return false
	}
	if !vetted && !h2ValidValue(value) {
		d.malformed = true
		return false
	}
	if len(name) > 0 && name[0] == ':' {
		if d.regular || d.trailer {
			d.malformed = true
			return true
		}
		var p *h2field
		switch name {
		case ":method":
			p = &d.method
		case ":path":
			p = &d.path
		case ":authority":
			p = &d.authority
		case ":scheme":
			p = &d.scheme
		default:
			d.malformed = true // :status, :protocol and unknown ones
			return true
		}
		if p.ns >= 0 {
			d.malformed = true
			return true
		}
		*p = d.add(name, value)
		return true
	}
	d.regular = true
	if !vetted && !h2ValidName(name) {
		d.malformed = true
		return false
	}
	switch name {
	case "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade":
		d.malformed = true // §8.2.2
		return true
	case "te":
		if value != "trailers" {
			d.malformed = true
			return true
		}
	case "content-length":
		n, err := strconv.ParseInt(value, 10, 64)
		if err != nil || n < 0 || d.declLen >= 0 && d.declLen != n {
			d.malformed = true
			return true
		}
		d.declLen = n
	case "cookie":
		// §8.2.3: crumbs are joined into one field for HTTP/1.1.
		d.cookies = append(d.cookies, d.add(name, value))
		return true
	}
	d.fields = append(d.fields, d.add(name, value))
	return true
}

// h2FieldOverhead is the per-field size RFC 9113 §6.5.2 adds to a header
// list's size.
const h2FieldOverhead = 32

// add copies name and value into buf and returns their offsets.
func (d *h2decode) add(name, value string) h2field {
	var f h2field
	f.ns = len(d.buf)
	d.buf = append(d.buf, name...)
	f.ne = len(d.buf)
	f.vs = f.ne
	d.buf = append(d.buf, value...)
	f.ve = len(d.buf)
	return f
}

// h2ValidName: a lowercase token (§8.2.1; uppercase is malformed).
func h2ValidName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !ascii.IsTchar(c) || 'A' <= c && c <= 'Z' {
			return false
		}
	}
	return true
}

// h2ValidValue: no whitespace at either end and no NUL, CR or LF
// (§8.2.1), nor any other control byte but HTAB (RFC 9110 §5.5's
// field-value, which the HTTP/1.1 parser enforces too): a value the proxy
// forwards to HTTP/1.1 must be one an HTTP/1.1 client could have sent.
func h2ValidValue(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < ' ' && c != '\t' || c == 0x7f {
			return false
		}
	}
	if n := len(s); n > 0 && (s[0] == ' ' || s[0] == '\t' || s[n-1] == ' ' || s[n-1] == '\t') {
		return false
	}
	return true
}

// h2HostName is the field a :authority becomes for HTTP/1.1 handlers
// (§8.3.1: it replaces Host).
const h2HostName = "host"

// buildHead makes s's request head from the decoded block: views into
// s.hbuf. It reports false if the request is malformed (§8.1.1).
func (d *h2decode) buildHead(h *phttp.Request, endStream bool) bool {
	cookie := h2absent
	if len(d.cookies) > 0 {
		cookie = d.joinCookies() // before any view: buf may move
	}
	buf := d.buf
	v := func(f h2field) []byte { return buf[f.vs:f.ve] }
	if d.method.ns < 0 {
		return false
	}
	h.Reset()
	h.Method = v(d.method)
	h.Version = phttp.HTTP11
	connect := string(h.Method) == "CONNECT"
	switch {
	case connect:
		// §8.5: only :method and :authority.
		if d.authority.ns < 0 || d.path.ns >= 0 || d.scheme.ns >= 0 {
			return false
		}
		h.Target = v(d.authority)
	case d.path.ns < 0 || d.scheme.ns < 0 || d.path.ve == d.path.vs:
		return false
	default:
		h.Target = v(d.path)
	}
	if !h2CheckLine(h.Method, h.Target, connect) {
		return false
	}
	host := -1
	for _, f := range d.fields {
		name := buf[f.ns:f.ne]
		if string(name) == h2HostName {
			if host >= 0 {
				return false // two Hosts, as HTTP/1.1's ErrMultipleHost
			}
			host = len(h.Headers)
		}
		h.Headers = append(h.Headers, phttp.Header{Name: name, Value: buf[f.vs:f.ve]})
	}
	var authority []byte
	if d.authority.ns >= 0 {
		authority = v(d.authority)
	}
	if !h2SetHost(h, host, authority, d.authority.ns >= 0) {
		return false
	}
	if cookie.ns >= 0 {
		h.Headers = append(h.Headers, phttp.Header{Name: buf[cookie.ns:cookie.ne], Value: buf[cookie.vs:cookie.ve]})
	}
	h.ContentLength = d.declLen
	switch {
	case endStream:
		if d.declLen > 0 {
			return false
		}
		h.Body = phttp.BodyNone
	case d.declLen >= 0:
		h.Body = phttp.BodyLength
	default:
		// Length unknown: handlers see a streamed body, as a chunked
		// one (a proxy frames it chunked for HTTP/1.1).
		h.Body = phttp.BodyChunked
	}
	return true
}

// joinCookies appends the cookie crumbs joined by "; " to buf, after
// the first crumb's name, and returns the field's offsets.
func (d *h2decode) joinCookies() h2field {
	first := d.cookies[0]
	f := h2field{ns: first.ns, ne: first.ne, vs: len(d.buf)}
	for i, c := range d.cookies {
		if i > 0 {
			d.buf = append(d.buf, "; "...)
		}
		d.buf = append(d.buf, d.buf[c.vs:c.ve]...)
	}
	f.ve = len(d.buf)
	return f
}

// h2HostField names the Host field made from :authority. Views of it are
// never written through.
var h2HostField = []byte(h2HostName)
