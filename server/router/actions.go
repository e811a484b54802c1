package router

import (
	"strconv"

	"github.com/simdedge/simdedge/server"
)

// Respond returns a handler that answers every request with a fixed
// status, headers and body. The response is built from these values on each
// request without allocating.
func Respond(status int, body string, headers [][2]string) server.Handler {
	return &fixed{status: status, body: body, headers: headers}
}

type fixed struct {
	status  int
	body    string
	headers [][2]string
}

// InlineHandler implements server.Inliner: a fixed response never blocks.
func (f *fixed) InlineHandler(*server.Request) server.Handler { return f }

func (f *fixed) ServeEdge(w *server.ResponseWriter, r *server.Request) {
	for _, h := range f.headers {
		w.AddHeader(h[0], h[1])
	}
	w.WriteHeader(f.status)
	w.WriteString(f.body)
}

// Echo returns a handler that answers with a JSON object describing the
// parsed request: method, target, version, host, the header fields as
// [name, value] pairs in the order received, and body_len, the number of
// body bytes read (the body itself is read and discarded, up to the
// server's body limit).
func Echo() server.Handler { return echo{} }

type echo struct{}

// InlineHandler implements server.Inliner: the event loop asks only once
// the body is buffered, so BodyBytes returns a view without blocking.
func (echo) InlineHandler(*server.Request) server.Handler { return echo{} }

// echoScratch is the stack buffer the JSON is built in, piece by piece.
const echoScratch = 512

func (echo) ServeEdge(w *server.ResponseWriter, r *server.Request) {
	body, err := r.BodyBytes()
	if err != nil {
		w.WriteHeader(server.StatusFor(err))
		w.AddHeader("Content-Type", "text/plain; charset=utf-8")
		w.WriteString("bad request body\n")
		w.SetClose()
		return
	}
	n := len(body)
	var scratch [echoScratch]byte
	w.AddHeader("Content-Type", "application/json")
	b := scratch[:0]
	b = append(b, `{"method":`...)
	b = appendJSONString(b, r.Method())
	b = append(b, `,"target":`...)
	b = appendJSONString(b, r.Target())
	b = append(b, `,"version":"`...)
	if r.HTTP2() {
		b = append(b, "HTTP/2"...)
	} else if r.HTTP3() {
		b = append(b, "HTTP/3"...)
	} else {
		b = append(b, r.Version().String()...)
	}
	b = append(b, `","host":`...)
	b = appendJSONString(b, r.Host())
	b = append(b, `,"headers":[`...)
	w.Write(b)
	for i, h := range r.Headers() {
		b = b[:0]
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '[')
		b = appendJSONString(b, h.Name)
		b = append(b, ',')
		b = appendJSONString(b, h.Value)
		b = append(b, ']')
		w.Write(b)
	}
	b = append(b[:0], `],"body_len":`...)
	b = strconv.AppendInt(b, int64(n), 10)
	b = append(b, "}\n"...)
	w.Write(b)
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string. Field values may hold
// obs-text (bytes >= 0x80, RFC 9110 §5.5) that need not be UTF-8; they are
// escaped as \u00XX (read as Latin-1) so the output is always valid JSON.
func appendJSONString(b, s []byte) []byte {
	b = append(b, '"')
	for _, c := range s {
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20 || c >= 0x7f:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}
