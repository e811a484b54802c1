package server

import (
	"bytes"

	phttp "github.com/simdedge/simdedge/parse/http"
	"github.com/simdedge/simdedge/parse/json/envelope"
)

// EnvelopeMessage is a Message that may carry a FlatBuffers request
// envelope (parse/json/envelope) instead of HTTP/1.1 bytes: a transport
// whose wire format marks envelopes implements it (rdma's envelope flag).
// The server then serves the message with the same router and handlers as
// an HTTP/1.1 one.
//
// An envelope is trusted no more than a request on the wire. The server
// verifies it (envelope.Read checks every offset before any accessor
// runs), writes its method, target, version and header fields as an
// HTTP/1.1 head into a buffer of its own and parses that with the same
// parser and limits as every request, so the same rules hold (token
// methods, target bytes, header syntax, Host, Content-Length,
// Transfer-Encoding, header count and size). A field holding a line or
// field delimiter (CR, LF; a space in the method or target; a colon in a
// name) is refused rather than written, so one envelope field is always
// one parsed field. The envelope's body is the request body, a view of the
// message's buffer (no copy): a Transfer-Encoding field is refused (the
// envelope frames the body, a second framing would be a smuggling risk
// once the request is forwarded), and a Content-Length field must equal
// the body's length. The handler sees Head().Body == BodyLength with
// ContentLength the body's length when there is a body, as for a request
// that sent Content-Length. Anything refused is answered 400 (or the
// parser's status: 414, 431, 505; 413 for a body over MaxBodyBytes),
// and the handler does not run.
type EnvelopeMessage interface {
	Message
	// Envelope reports whether Data is a request envelope.
	Envelope() bool
}

// envelopeVersion: the largest version an envelope can state in the
// "HTTP/d.d" form the parser reads (major*10+minor, one digit each).
const envelopeVersion = 99

// serveEnvelope serves a message holding a request envelope; it returns a
// status to answer with when the envelope was refused before the handler
// ran.
func (x *exchange) serveEnvelope(data []byte) int {
	v, err := envelope.Read(data)
	if err != nil {
		return 400
	}
	if v.NumHeaders() > x.cfg.Limits.MaxHeaders {
		return 431
	}
	var status int
	x.envHead, status = appendEnvelopeHead(x.envHead[:0], &v, x.cfg.Limits.MaxHeaderBytes)
	if status != 0 {
		return status
	}
	head := &x.req.head
	n, err := x.req.parseHead(x.cfg.parser, x.envHead, &x.cfg.paths)
	if err == phttp.ErrNeedMore {
		return 400 // cannot happen: the head written is complete
	}
	if err != nil {
		return phttp.StatusFor(err)
	}
	// One envelope field is one parsed field, and nothing was left over:
	// the head the handler sees is the envelope's.
	if n != len(x.envHead) || len(head.Headers) != v.NumHeaders() {
		return 400
	}
	body := v.Body()
	if head.Body == phttp.BodyChunked || head.Headers.Count("Transfer-Encoding") > 0 {
		return 400
	}
	if head.ContentLength >= 0 && head.ContentLength != int64(len(body)) {
		return 400
	}
	if max := x.cfg.Limits.MaxBodyBytes; max > 0 && int64(len(body)) > max {
		return 413
	}
	if len(body) > 0 || head.ContentLength >= 0 {
		head.Body, head.ContentLength = phttp.BodyLength, int64(len(body))
	} else {
		head.Body, body = phttp.BodyNone, nil
	}
	x.handle(x.envHead[:n], body)
	return 0
}

// appendEnvelopeHead writes the envelope's request line and field lines as
// an HTTP/1.1 head to dst, at most max bytes. It refuses (400) a field that
// holds a delimiter of the line it goes into, and stops with 431 once the
// head would exceed max.
func appendEnvelopeHead(dst []byte, v *envelope.View, max int) ([]byte, int) {
	method, target, version := v.Method(), v.Target(), v.Version()
	if bytes.ContainsAny(method, " \r\n") || bytes.ContainsAny(target, " \r\n") || version > envelopeVersion {
		return dst, 400
	}
	// Request line: method SP target SP "HTTP/" d "." d CRLF. Longer
	// than the whole head may be, it is too long as a line too.
	if len(method)+len(target)+len(" HTTP/1.1\r\n")+1 > max {
		return dst, 414
	}
	dst = append(dst, method...)
	dst = append(dst, ' ')
	dst = append(dst, target...)
	dst = append(dst, " HTTP/"...)
	dst = append(dst, '0'+version/10, '.', '0'+version%10, '\r', '\n')
	for i := range v.NumHeaders() {
		name, value := v.Header(i)
		if bytes.ContainsAny(name, ":\r\n") || bytes.ContainsAny(value, "\r\n") {
			return dst, 400
		}
		// name ": " value CRLF, and the final CRLF still to come.
		if len(dst)+len(name)+len(value)+len(": \r\n\r\n") > max {
			return dst, 431
		}
		dst = append(dst, name...)
		dst = append(dst, ':', ' ')
		dst = append(dst, value...)
		dst = append(dst, '\r', '\n')
	}
	return append(dst, '\r', '\n'), 0
}
