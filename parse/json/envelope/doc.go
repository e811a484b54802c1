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
package envelope
