package server

import (
	"github.com/simdedge/simdedge/internal/ascii"
	phttp "github.com/simdedge/simdedge/parse/http"
)

// Edit is per-request memory for a route's policy (server/router's
// rewrites): the bytes it made for this request (a rewritten target, field
// values, response field lines), the captures of the route's path_regex,
// and the response's header edit. Each connection (and message) keeps one
// and reuses its buffers, so a warm request allocates nothing. Only the
// route's policy writes it, once per request before its handler runs (the
// rewrite step of its plan, plan.go); it stays valid until the response
// ends. A route without a policy never reads it; only the response edit is
// cleared when a request ends.
type Edit struct {
	// Buf holds the bytes made for the request; the views below and the
	// ones given to SetTarget and SetHeaders point into it.
	Buf []byte
	// Caps are path_regex's submatch indices into CapSrc (nil if the
	// route has none or uses none).
	Caps   []int
	CapSrc []byte
	// RespDrop and RespAdd are the response's header edit, which the
	// plan runner hands the ResponseWriter (SetHeaderEdit) after the
	// rewrite.
	RespDrop []string
	RespAdd  []byte
}

// SentTarget is the target as the client sent it, before path
// normalisation (paths.go) and a route's rewrite (SetTarget); the access
// log records it, as nginx's $request does.
func (r *Request) SentTarget() []byte {
	if r.sentRaw != nil {
		return r.sentRaw
	}
	if r.sentTarget != nil {
		return r.sentTarget
	}
	return r.head.Target
}

// Edit returns the request's policy memory (server/router).
func (r *Request) Edit() *Edit { return &r.edit }

// SetTarget replaces the target that Target, URL and a proxy see (a path
// rewrite). t must stay valid until the handler returns (Edit.Buf). Routing
// is done by then; Clone still copies the head as received.
func (r *Request) SetTarget(t []byte) {
	if r.sentTarget == nil {
		r.sentTarget = r.head.Target
	}
	r.head.Target = t
	r.urlDone, r.urlErr = false, nil
}

// SetHeaders replaces the fields that Headers, Header and a proxy see
// with hs: r.Headers() edited in place, grown by append if need be (its
// backing array is the parser's, which keeps it for the connection's next
// request). Host follows the edited fields. The framing (Content-Length,
// chunked, Connection) was decided from the fields received and does not
// change: server/rewrite refuses edits of those fields.
func (r *Request) SetHeaders(hs phttp.Headers) {
	r.head.Headers = hs
	r.head.Host, _ = hs.Get("Host")
}

// SetHeaderEdit makes the head, when it is written, go without the fields
// named in drop (ASCII case-insensitive) and with the field lines of add
// ("Name: value\r\n", checked by the caller: server/rewrite) after the
// others: a route's response_headers, applied to whatever its handler
// answers (proxied responses included). add must stay valid until the
// response ends (Edit.Buf). It does nothing once the head is sent; the
// fields the server writes itself (Date, the framing, Connection) are not
// subject to it.
func (w *ResponseWriter) SetHeaderEdit(drop []string, add []byte) {
	if !w.committed {
		w.editDrop, w.editAdd = drop, add
	}
}

// applyEdit applies SetHeaderEdit's edit to the handler's field lines, in
// place.
func (w *ResponseWriter) applyEdit() {
	if len(w.editDrop) > 0 {
		h := w.hdr
		k := 0
		for i := 0; i < len(h); {
			end := i
			for end < len(h) && h[end] != '\n' {
				end++
			}
			end++ // past '\n': every line ends "\r\n" (addHeader)
			colon := i
			for colon < end && h[colon] != ':' {
				colon++
			}
			if !w.drops(h[i:colon]) {
				k += copy(h[k:], h[i:end])
			}
			i = end
		}
		w.hdr = h[:k]
	}
	w.hdr = append(w.hdr, w.editAdd...)
}

func (w *ResponseWriter) drops(name []byte) bool {
	for _, d := range w.editDrop {
		if ascii.EqualFold(bytesView(name), d) {
			return true
		}
	}
	return false
}
