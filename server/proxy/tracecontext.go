package proxy

import (
	phttp "github.com/simdedge/simdedge/parse/http"
	"github.com/simdedge/simdedge/server/trace"
)

// W3C Trace Context on the forwarded head (server.TraceOptions): the edge
// acts as a span of the client's trace. Both proxy paths call it through
// appendHead.

const (
	traceparentField = "traceparent"
	tracestateField  = "tracestate"
)

func isTraceField(name []byte) bool {
	return len(name) == len(traceparentField) && phttp.EqualFold(name, traceparentField) ||
		len(name) == len(tracestateField) && phttp.EqualFold(name, tracestateField)
}

// appendTraceContext writes traceparent with the trace ID and flags
// received and a new parent ID (the edge's span), and tracestate as
// received. A missing traceparent, an invalid one, or more than one
// (§3.2: a vendor must not forward what it cannot parse) is dropped with
// its tracestate; with generate a new trace starts instead. A tracestate
// longer than trace.MaxTracestate is dropped (§3.3.1.5).
func appendTraceContext(b []byte, hs phttp.Headers, generate bool) []byte {
	i := hs.Index(traceparentField, 0)
	var p trace.Parent
	ok := false
	if i >= 0 && hs.Index(traceparentField, i+1) < 0 {
		p, ok = trace.ParseTraceparent(hs[i].Value)
	}
	if !ok {
		if !generate {
			return b
		}
		p = trace.NewParent()
	}
	b = append(b, traceparentField+": "...)
	b = trace.AppendTraceparent(b, &p)
	b = append(b, "\r\n"...)
	if !ok {
		return b // a new trace has no state yet
	}
	// tracestate may come in several fields: they join with commas
	// (RFC 9110 §5.3), as one list.
	n, size := 0, 0
	for j := hs.Index(tracestateField, 0); j >= 0; j = hs.Index(tracestateField, j+1) {
		if len(hs[j].Value) > 0 {
			n++
			size += len(hs[j].Value) + 1
		}
	}
	if n == 0 || size-1 > trace.MaxTracestate {
		return b
	}
	b = append(b, tracestateField+": "...)
	first := true
	for j := hs.Index(tracestateField, 0); j >= 0; j = hs.Index(tracestateField, j+1) {
		if len(hs[j].Value) == 0 {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		b = append(b, hs[j].Value...)
		first = false
	}
	return append(b, "\r\n"...)
}
