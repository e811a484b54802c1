package server

import (
	"github.com/simdedge/simdedge/internal/ascii"
	phttp "github.com/simdedge/simdedge/parse/http"
)

// Per-request state for a route's gate (router.Gate: allow/deny, rate
// limit, basic and forward auth). The event loop may ask a route's
// Inliner, then its LoopProxier, then hand the connection to a goroutine
// that serves the same request again from its bytes: the admission
// decision (which takes a rate-limit token) must happen once per request,
// not once per question. The verdict is kept in the Request until the
// request ends (it survives the hand-off, which re-parses the same bytes
// without ending the request).

// GateVerdict reports whether the admission decision was taken for the
// current request, with its status (0: admitted, else the answer, e.g.
// 403 or 429) and the Retry-After seconds of a 429.
func (r *Request) GateVerdict() (decided bool, status, retryAfter int) {
	return r.gateDone, int(r.gateStatus), int(r.gateRetry)
}

// SetGateVerdict records the admission decision for the current request.
func (r *Request) SetGateVerdict(status, retryAfter int) {
	r.gateDone, r.gateStatus, r.gateRetry = true, uint16(status), uint32(retryAfter)
}

// SetHeader replaces every request field named name (ASCII
// case-insensitive) with one field name: value, or removes them all when
// value is nil, for what the handler that follows sees (forward auth's
// copy_headers; the proxy forwards the fields of Headers). name and value
// must stay valid until the handler returns. It is for goroutine paths:
// the first change may allocate. (A route's request_headers edit all
// fields at once through SetHeaders and Edit's buffer, allocation-free.)
func (r *Request) SetHeader(name string, value []byte) {
	hs := r.head.Headers
	out := hs[:0]
	for _, h := range hs {
		if !ascii.EqualFold(h.Name, name) {
			out = append(out, h)
		}
	}
	if value != nil {
		out = append(out, headerField(name, value))
	}
	r.head.Headers = out
}

func headerField(name string, value []byte) phttp.Header {
	return phttp.Header{Name: []byte(name), Value: value}
}
