// Package envelope is the FlatBuffers request envelope of simdedge: a parsed
// HTTP request (method, target, version, header name/value bytes, body and
// URL components) written so that a backend reads it in place, without
// re-parsing HTTP. The edge uses it to hand requests to RDMA backends; it is
// also how bodies sent as application/x-flatbuffers are read.
//
// The schema is ../schema/request.fbs; the Go code flatc generates from it is
// committed in internal/envelopefb (regenerate with ../schema/generate.sh).
//
// Builder writes envelopes into one reused buffer with no allocation in
// steady state. Read verifies an untrusted buffer completely (every offset,
// length and vtable entry, alignment relative to the buffer start) before the
// generated accessors may touch it: the FlatBuffers Go runtime checks
// nothing and would panic or read out of bounds on a malformed buffer. A
// View's accessors return views into the verified buffer.
//
// Feeding it from parse/http views needs no conversion slice; a server does
//
//	b.Reset()
//	for _, h := range req.Headers { // parse/http's Request
//		b.AddHeader(h.Name, h.Value)
//	}
//	buf := b.Finish(&envelope.Parts{Method: req.Method, Target: req.Target,
//		Version: uint8(req.Version), Body: body, URL: &urlParts})
//
// (parse/http's Version is already major*10+minor). The package does not
// import parse/http, keeping the parse/* dependency order one-way.
package envelope
