package proxy

import (
	"errors"
	"io"
	"strconv"
	"time"

	"github.com/simdedge/simdedge/internal/ascii"
	phttp "github.com/simdedge/simdedge/parse/http"
	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/internal/rbuf"
)

// hopByHop lists the fields RFC 9110 §7.6.1 says a proxy must not forward
// (plus Proxy-Connection, which old clients send instead of Connection).
// The fields a Connection field names are removed as well (namedIn).
var hopByHop = []string{"Connection", "Proxy-Connection", "Keep-Alive", "TE", "Transfer-Encoding", "Upgrade"}

func isHopByHop(name []byte) bool {
	for _, h := range hopByHop {
		if phttp.EqualFold(name, h) {
			return true
		}
	}
	return false
}

// namedIn reports whether a Connection field in hs lists name, for a
// field that may be hop-by-hop at all: a sender cannot make Host or the
// framing fields hop-by-hop (RFC 9110 §7.6.1: a Connection option names
// a field of this connection alone, and these describe the message
// itself). Host must reach the upstream, or it answers 400 or serves
// its default virtual host; Content-Length and Transfer-Encoding are
// written again from the framing the edge parsed, whatever Connection
// says (appendHead, writeResponseHead).
func namedIn(hs phttp.Headers, name []byte) bool {
	if neverHopByHop(name) {
		return false
	}
	for i := hs.Index("Connection", 0); i >= 0; i = hs.Index("Connection", i+1) {
		if listHas(hs[i].Value, name) {
			return true
		}
	}
	return false
}

// neverHopByHop: the fields a Connection option cannot remove (namedIn).
func neverHopByHop(name []byte) bool {
	return phttp.EqualFold(name, "Host") || phttp.EqualFold(name, "Content-Length") ||
		phttp.EqualFold(name, "Transfer-Encoding")
}

// listHas reports whether the comma-separated list v has item (ASCII
// case-insensitive).
func listHas(v, item []byte) bool {
	for len(v) > 0 {
		i := 0
		for i < len(v) && v[i] != ',' {
			i++
		}
		if ascii.EqualFold(ascii.TrimOWS(v[:i]), item) {
			return true
		}
		if i == len(v) {
			return false
		}
		v = v[i+1:]
	}
	return false
}

// skipRequestField: fields the proxy drops or rewrites when forwarding a
// request. Expect is answered by the edge itself (it sends 100 Continue to
// the client before reading the body), Content-Length is written back from
// the framing, and the forwarding fields are rebuilt.
func skipRequestField(hs phttp.Headers, name []byte) bool {
	return isHopByHop(name) || namedIn(hs, name) ||
		phttp.EqualFold(name, "Expect") || phttp.EqualFold(name, "Content-Length") ||
		isForwardingField(name) || phttp.EqualFold(name, "Via")
}

// appendHead writes the request head to forward, with the body framed as
// kind (a small chunked body goes de-chunked, with its length). An
// absolute-form target goes in origin form, with Host from its authority
// (target.go).
func (p *Proxy) appendHead(b []byte, r *server.Request, head *phttp.Request, kind phttp.BodyKind, length int64) []byte {
	b = append(b, head.Method...)
	b = append(b, ' ')
	b, authority := appendTarget(b, head)
	b = append(b, " HTTP/1.1\r\n"...)
	if authority != nil {
		b = appendField(b, hostName, authority)
	}
	hs := head.Headers
	rid, ridName := r.RequestID(), r.RequestIDHeader()
	tro := r.TraceOptions()
	trusted := r.PeerTrusted()
	for _, h := range hs {
		if skipRequestField(hs, h.Name) || p.dropsClientField(h.Name, trusted) ||
			authority != nil && phttp.EqualFold(h.Name, "Host") ||
			rid != nil && phttp.EqualFold(h.Name, ridName) || tro.Propagate && isTraceField(h.Name) {
			continue
		}
		b = appendField(b, h.Name, h.Value)
	}
	if rid != nil {
		b = append(b, ridName...)
		b = append(b, ": "...)
		b = append(b, rid...)
		b = append(b, "\r\n"...)
	}
	if tro.Propagate {
		b = appendTraceContext(b, hs, tro.Generate)
	}
	if head.Host == nil && authority == nil {
		// HTTP/1.0 clients may omit Host; HTTP/1.1 requires it.
		b = append(b, "Host: "...)
		b = append(b, p.up.targets[0].addr...)
		b = append(b, "\r\n"...)
	}
	b = p.appendForwarded(b, r, hs, head, authority, trusted)
	v := head.Version
	if r.HTTP2() {
		v = viaHTTP2 // the protocol received (RFC 9110 §7.6.3)
	} else if r.HTTP3() {
		v = viaHTTP3
	}
	b = p.appendVia(b, hs, v)
	switch kind {
	case phttp.BodyLength:
		b = append(b, "Content-Length: "...)
		b = strconv.AppendInt(b, length, 10)
		b = append(b, "\r\n"...)
	case phttp.BodyChunked:
		b = append(b, "Transfer-Encoding: chunked\r\n"...)
	}
	return append(b, "\r\n"...)
}

// viaHTTP2 stands for HTTP/2 in appendVia (phttp.Version names only
// HTTP/1.x).
const viaHTTP2 phttp.Version = 20

// viaHTTP3 stands for HTTP/3 likewise.
const viaHTTP3 phttp.Version = 30

// appendVia appends "Via: <received values>, 1.1 simdedge" (RFC 9110
// §7.6.3: the protocol version received, then the pseudonym).
func (p *Proxy) appendVia(b []byte, hs phttp.Headers, v phttp.Version) []byte {
	b = append(b, "Via: "...)
	for i := hs.Index("Via", 0); i >= 0; i = hs.Index("Via", i+1) {
		b = append(b, hs[i].Value...)
		b = append(b, ", "...)
	}
	switch v {
	case phttp.HTTP10:
		b = append(b, "1.0 "...)
	case viaHTTP2:
		b = append(b, "2 "...)
	case viaHTTP3:
		b = append(b, "3 "...)
	default:
		b = append(b, "1.1 "...)
	}
	b = append(b, p.via...)
	return append(b, "\r\n"...)
}

var (
	viaName  = []byte("Via")
	hostName = []byte("Host")
)

func appendField(b, name, value []byte) []byte {
	b = append(b, name...)
	b = append(b, ": "...)
	b = append(b, value...)
	return append(b, "\r\n"...)
}

// forwardResponse sends uc.resp and its body to w, streaming. It reports
// whether the upstream connection ended cleanly (reusable as far as the
// body goes).
func (p *Proxy) forwardResponse(w *server.ResponseWriter, uc *upConn, isHead bool) bool {
	resp := &uc.resp
	// Via is rebuilt in uc.out, which is free once the request was sent.
	uc.out = p.writeResponseHead(w, resp, uc.out[:0], isHead)
	if isHead || resp.Body == phttp.BodyNone {
		return true
	}
	timeout := p.up.header
	switch resp.Body {
	case phttp.BodyLength:
		var d phttp.LengthDecoder
		d.Reset(resp.ContentLength)
		for {
			n, done := d.Decode(uc.buf[uc.r:uc.w])
			if n > 0 {
				if _, err := w.Write(uc.buf[uc.r : uc.r+n]); err != nil {
					return false
				}
				uc.r += n
			}
			if done {
				return true
			}
			if err := p.readBody(w, uc, timeout); err != nil {
				p.bodyFailed(w)
				return false
			}
		}
	case phttp.BodyChunked:
		uc.dec.Reset()
		if uc.dec.OnTrailer == nil {
			uc.dec.OnTrailer = uc.addTrailer // once per connection
		}
		uc.tw = w // read only by Decode below
		for {
			n, consumed, err := uc.dec.Decode(uc.buf[uc.r:uc.w])
			if n > 0 {
				if _, werr := w.Write(uc.buf[uc.r : uc.r+n]); werr != nil {
					return false
				}
			}
			uc.r += consumed
			if err == nil {
				return true
			}
			if err != phttp.ErrNeedMore {
				p.bodyFailed(w) // malformed upstream body
				return false
			}
			if n > 0 || consumed > 0 {
				continue
			}
			if err := p.readBody(w, uc, timeout); err != nil {
				p.bodyFailed(w)
				return false
			}
		}
	default: // BodyUntilClose
		for {
			if uc.w > uc.r {
				if _, err := w.Write(uc.buf[uc.r:uc.w]); err != nil {
					return false
				}
				uc.r = uc.w
			}
			err := p.readBody(w, uc, timeout)
			if errors.Is(err, io.EOF) {
				return false // complete, but the connection is spent
			}
			if err != nil {
				p.bodyFailed(w)
				return false
			}
		}
	}
}

// writeResponseHead sends resp's status and end-to-end fields to w, with
// Via rebuilt in scratch (returned for reuse) and the framing left to w.
func (p *Proxy) writeResponseHead(w *server.ResponseWriter, resp *phttp.Response, scratch []byte, isHead bool) []byte {
	w.WriteHeader(resp.Status)
	hs := resp.Headers
	for _, h := range hs {
		if isHopByHop(h.Name) || namedIn(hs, h.Name) || phttp.EqualFold(h.Name, "Content-Length") ||
			phttp.EqualFold(h.Name, "Via") {
			continue
		}
		w.AddHeaderBytes(h.Name, h.Value)
	}
	via := p.appendVia(scratch, hs, resp.Version)
	w.AddHeaderBytes(viaName, via[len("Via: "):len(via)-len("\r\n")])
	if resp.ContentLength >= 0 && (resp.Body == phttp.BodyLength || isHead) {
		w.SetContentLength(resp.ContentLength)
	}
	if resp.Body == phttp.BodyChunked && !isHead {
		// Its trailers reach a client that sent "TE: trailers" (the
		// decoders' OnTrailer calls AddTrailer); others get none.
		w.EnableTrailers()
	}
	return via
}

// bodyFailed handles an upstream that failed mid-body: 502 if nothing has
// reached the client yet, else a truncated response (Abort), so the client
// can tell it is incomplete.
func (p *Proxy) bodyFailed(w *server.ResponseWriter) {
	if w.Reset() {
		p.respondError(w, 502, "bad gateway\n")
		w.SetClose()
		return
	}
	w.Abort()
}

// readBody makes room in uc.buf and reads more response body. Before
// waiting on the upstream it flushes what the client has been given, so a
// slow upstream's bytes reach the client as they come.
func (p *Proxy) readBody(w *server.ResponseWriter, uc *upConn, timeout time.Duration) error {
	if w.Written() > 0 {
		if err := w.Flush(); err != nil {
			return err
		}
	}
	// A partial chunk line can fill the buffer: the decoder bounds lines
	// at 4 KiB, so it grows at most once.
	uc.buf, uc.w = rbuf.Compact(uc.buf, uc.r, uc.w)
	uc.r = 0
	uc.readDL = time.Time{} // per-read deadlines while streaming
	uc.nc.SetReadDeadline(time.Now().Add(timeout))
	n, err := uc.nc.Read(uc.buf[uc.w:])
	uc.w += n
	if err == io.EOF && n > 0 {
		return nil
	}
	return err
}
