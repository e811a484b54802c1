package server

import (
	"github.com/simdedge/simdedge/internal/ascii"
	phttp "github.com/simdedge/simdedge/parse/http"
)

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
