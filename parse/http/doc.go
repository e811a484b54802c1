// Package http parses HTTP/1.1 requests and responses (RFC 9110, RFC 9112)
// into zero-copy views, strictly.
//
// # Use
//
// A server reads into a connection buffer and calls ParseRequest on the
// bytes it has. ErrNeedMore means the head is not complete yet: nothing was
// consumed, and the server calls again once more bytes have arrived. On
// success, n is the length of the head and Request.Body says how the body
// that follows is framed: read ContentLength bytes with a LengthDecoder, or
// decode chunks in place with a ChunkedDecoder; both are incremental and
// keep their state between calls. Any other error is final; StatusFor maps
// it to the status to answer with (400, 413, 414, 431, 501 or 505). A proxy
// reads its upstream's answer with ParseResponse (ParseHEADResponse for the
// answer to HEAD).
//
// # Views and ownership
//
// Request and Response hold slices of the parsed buffer, never copies.
// They are valid while the caller keeps the buffer unchanged; Clone copies a
// request out. Reusing a Request keeps its Headers array, so steady-state
// parsing allocates nothing. Headers.Get and EqualFold look fields up
// case-insensitively without allocating; Request.ResolveTarget rebuilds the
// target URI (RFC 9112 §3.3) and parses it with parse/url.
//
// # Strictness
//
// The defaults reject every shape RFC 9112 calls a framing or smuggling
// risk, each with its own sentinel error: Transfer-Encoding with
// Content-Length, chunked that is not the final coding, unknown codings
// (and, under Options.OnlyChunked, any coding besides chunked),
// malformed or conflicting Content-Length, obs-fold, whitespace before a
// colon, bare CR, bare LF (Options.AllowBareLF accepts it), control bytes
// in names and values, non-token methods and names, versions other than
// HTTP/1.0 and HTTP/1.1, and HTTP/1.1 requests without exactly one valid
// Host. Limits bound the request line (8 KiB), the head (64 KiB) and the
// number of fields (100); see Options. Error strings never contain input
// bytes.
//
// # How it is fast
//
// The head walker needs two searches per field line: the end of the name
// (the first byte that is not a tchar) and the end of the line (the first
// control byte). With a SIMD level active, asm.Classify computes both as
// bit masks for up to 1 KiB at a time and the walker finds each end with a
// shift and a trailing-zero count; without one, a scalar walk tests eight
// value bytes per step instead. Both walks share all other code and are
// tested and fuzzed for identical results.
//
// With masks, most field lines never reach that shared code: fastFields
// (fields_fast.go) takes runs of ordinary lines in a loop without calls,
// taking each line's end from a running word of control-byte bits, and
// hands any other line to the general walk (docs/decisions/0040).
package http
