package server

import (
	"io"

	"github.com/simdedge/simdedge/internal/ascii"
)

// Response compression (issue 23). The policy (which codings, which media
// types, the minimum length, the encoder pools) lives in server/compress;
// the ResponseWriter applies it, because every action of a route (respond,
// echo, files, Go handlers, both proxy paths) writes its response through
// one, on every engine: so compression is written once, below the engines.
//
// A route's plan arms it (Plan.Compress, plan.go) before its action writes
// (the loop's own proxy writes the upstream's head and body through the
// connection's ResponseWriter too). The ResponseWriter decides once per response, at
// the first moment the decision can be made: when a length is declared and
// the first body byte is written, when an undeclared body has reached the
// minimum length, at Flush (an undeclared length is then taken as long
// enough: the body is still coming) or at the end of the handler (where a
// short undeclared body goes out as is). Until then the
// body is held as usual (at most streamThreshold bytes), so nothing is
// buffered beyond what an uncompressed response holds.

// Compressor is a route's response compression policy.
type Compressor interface {
	// MinLength is the smallest body compressed: a response whose
	// declared length, or whose undeclared body when the decision is
	// forced (Flush, end), is shorter is sent as is.
	MinLength() int64
	// Compressible reports whether a response whose Content-Type value
	// is ct may be compressed.
	Compressible(ct []byte) bool
	// Encoder returns a pooled encoder for the best coding the client's
	// Accept-Encoding value ae allows, or nil for identity.
	Encoder(ae []byte) BodyEncoder
}

// BodyEncoder is one pooled stream encoder (gzip, br, zstd).
type BodyEncoder interface {
	// Coding is the content-coding token (RFC 9110 §8.4.1).
	Coding() string
	// Reset starts a new stream into dst.
	Reset(dst io.Writer)
	Write(p []byte) (int, error)
	// Flush writes what is buffered so that the client can decode every
	// byte written so far.
	Flush() error
	// Close ends the stream (trailer included).
	Close() error
	// Release returns the encoder to its pool; it must not be used
	// afterwards.
	Release()
}

// Compression is the response compression of r's route (its plan's
// Compress; nil: none). An action may decide by it before the plan's steps
// arm it (a files handler keeps large compressed files off the loop).
func (r *Request) Compression() Compressor {
	if r.plan == nil {
		return nil
	}
	return r.plan.Compress
}

// Coding states of a ResponseWriter.
const (
	codingUndecided = iota // compression not decided yet (or not armed)
	codingNone             // decided: the body goes out as written
	codingOn               // decided: the body goes through w.enc
	codingHead             // decided: a HEAD answer gets the headers only
)

// encSink is where an encoder's output goes: the framing path.
type encSink struct{ w *ResponseWriter }

func (s *encSink) Write(p []byte) (int, error) {
	s.w.writeRaw(bytesView(p))
	return len(p), s.w.err
}

// decide applies the route's compression policy to the response, once.
// flushing: the handler flushes before the end with no declared length,
// so the length cannot be judged and the minimum does not apply: a
// proxy flushes what it relayed before each wait on its upstream, and a
// small first read would otherwise leave a long chunked answer
// uncompressed (Caddy's encode decides the same way on Flush).
func (w *ResponseWriter) decide(flushing bool) {
	var c Compressor
	if w.req != nil {
		c = w.req.comp
	}
	w.coding = codingNone
	if c == nil || w.status == 204 || w.status == 206 || w.status < 200 {
		return
	}
	h := responseFields(w.hdr)
	if w.status == 304 {
		w.decideNotModified(c, h)
		return
	}
	if h.encoded || h.ranged || h.noTransform || !c.Compressible(h.ctype) {
		return
	}
	n := w.clen
	if n < 0 {
		n = w.written
	}
	if n < c.MinLength() && !(flushing && w.clen < 0) {
		return
	}
	enc := w.negotiate(c, h)
	if enc == nil {
		return
	}
	w.addHeader("Content-Encoding", enc.Coding())
	if w.headReq {
		enc.Release()
		w.coding = codingHead
		return
	}
	w.coding, w.enc = codingOn, enc
	enc.Reset(&w.encs)
	if len(w.body) > 0 {
		// The held body is compressed into a fresh buffer: swap them.
		held := w.body
		w.body, w.spare = w.spare[:0], nil
		w.encWrite(bytesView(held))
		w.spare = held[:0]
	}
}

// negotiate is the part of the decision a 304 shares with the 200 it
// stands for: the response depends on Accept-Encoding from here (RFC 9110
// §12.5.5), whether or not this client gets it compressed; it returns the
// client's encoder, or nil for identity, and with one makes a strong ETag
// weak: the compressed bytes are another representation, which a strong
// validator of the identity one must not name (nginx makes it weak too).
func (w *ResponseWriter) negotiate(c Compressor, h fieldFacts) BodyEncoder {
	if !h.varyAE {
		w.addHeader("Vary", "Accept-Encoding")
	}
	ae, _ := w.req.head.Headers.Get("Accept-Encoding")
	enc := c.Encoder(ae)
	if enc != nil && h.etag >= 0 {
		w.hdr = append(w.hdr, "W/"...)
		copy(w.hdr[h.etag+2:], w.hdr[h.etag:])
		copy(w.hdr[h.etag:], "W/")
	}
	return enc
}

// SetSelected tells a 304 (Not Modified) answer what the 200 it stands
// for would have carried: its Content-Type value and length. A 304 must
// send the Vary and ETag the 200 would have sent (RFC 9110 §15.4.5): a
// cache updates the stored response whose validator matches, so a strong
// tag where the stored 200 had W/ updates nothing. A handler that
// answers 304 itself (files) knows them; without them
// (decideNotModified) the 304 is judged by what it carries.
func (w *ResponseWriter) SetSelected(ct string, length int64) {
	w.selCT, w.selLen, w.selSet = ct, length, true
}

// decideNotModified gives a 304 the Vary and weak ETag that compression
// would have given the 200 (SetSelected). Without the handler's word
// (a proxied 304, which has no body and rarely a Content-Type) a type it
// does not carry is taken as compressible and the length as long
// enough: a Vary or weak tag too many costs a cache a weak match at
// worst, while one too few leaves the stored 200 un-updated.
func (w *ResponseWriter) decideNotModified(c Compressor, h fieldFacts) {
	ct, n := h.ctype, int64(-1)
	if w.selSet {
		ct, n = []byte(w.selCT), w.selLen
	}
	if h.encoded || h.noTransform || ct != nil && !c.Compressible(ct) || n >= 0 && n < c.MinLength() {
		return
	}
	if enc := w.negotiate(c, h); enc != nil {
		enc.Release() // a 304 has no body; no Content-Encoding either
	}
}

// stageChunk bounds the copy of a write on its way to the encoder.
const stageChunk = 16 << 10

// encWrite hands p to the encoder through a buffer the writer owns: the
// encoder's Write is an interface call, so passing p itself would make
// every body a handler writes escape to the heap (echo's stack scratch
// among them: an allocation per request on every route, compressing or
// not). The copy costs about 1 % of compressing the same bytes.
func (w *ResponseWriter) encWrite(p string) {
	for len(p) > 0 && w.err == nil {
		n := min(len(p), stageChunk)
		w.stage = append(w.stage[:0], p[:n]...)
		w.enc.Write(w.stage)
		p = p[n:]
	}
}

// endCoding closes the encoder at the end of the response.
func (w *ResponseWriter) endCoding() {
	if w.enc == nil {
		return
	}
	enc := w.enc
	if !w.aborted {
		enc.Close()
	}
	w.enc = nil
	enc.Release()
}

// dropCoding forgets the encoder without finishing its stream (Reset,
// Abort, a new response).
func (w *ResponseWriter) dropCoding() {
	if w.enc != nil {
		w.enc.Release()
		w.enc = nil
	}
	w.coding = codingUndecided
	w.selCT, w.selLen, w.selSet = "", -1, false
}

// fieldFacts is what compression needs to know of the handler's fields.
type fieldFacts struct {
	ctype       []byte
	encoded     bool // Content-Encoding present
	ranged      bool // Content-Range present
	noTransform bool // Cache-Control: no-transform (RFC 9111 §5.2.2.6)
	varyAE      bool // Vary already names Accept-Encoding (or *)
	etag        int  // offset in hdr of a strong ETag's value, -1 if none
}

// responseFields scans the "Name: value\r\n" lines the handler added
// (addHeader wrote them, so each ends in CRLF and has ": ").
func responseFields(hdr []byte) fieldFacts {
	f := fieldFacts{etag: -1}
	for start := 0; start < len(hdr); {
		end := start
		for end < len(hdr) && hdr[end] != '\n' {
			end++
		}
		line := trimCR(hdr[start:end])
		at := start
		start = end + 1
		colon := 0
		for colon < len(line) && line[colon] != ':' {
			colon++
		}
		if colon == len(line) {
			continue
		}
		name := bytesView(line[:colon])
		vstart := colon + 1
		for vstart < len(line) && (line[vstart] == ' ' || line[vstart] == '\t') {
			vstart++
		}
		vb := line[vstart:]
		value := ascii.TrimOWS(bytesView(vb))
		switch {
		case ascii.EqualFold(name, "Content-Type"):
			f.ctype = vb
		case ascii.EqualFold(name, "Content-Encoding"):
			f.encoded = f.encoded || !ascii.EqualFold(value, "identity")
		case ascii.EqualFold(name, "Content-Range"):
			f.ranged = true
		case ascii.EqualFold(name, "Cache-Control"):
			f.noTransform = f.noTransform || containsToken(value, "no-transform")
		case ascii.EqualFold(name, "Vary"):
			f.varyAE = f.varyAE || containsToken(value, "Accept-Encoding") || containsToken(value, "*")
		case ascii.EqualFold(name, "ETag"):
			if len(value) > 0 && value[0] == '"' {
				f.etag = at + vstart
			}
		}
	}
	return f
}

func trimCR(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\r' {
		return b[:n-1]
	}
	return b
}
