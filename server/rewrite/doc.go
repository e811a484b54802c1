// Package rewrite holds the route policies that change a request or a
// response without knowing the engines: value templates with variables
// ("{host}", "{path}", "{1}"), path rewrites (strip_prefix,
// replace_prefix, regex) and header field edits (set, add, remove).
//
// Everything is parsed and checked once, when a configuration is loaded;
// per request a policy appends its output to a buffer the caller owns and
// reuses, so a warm request allocates nothing (a regex with captures is
// the exception: Go's regexp returns submatch indices in a new slice).
//
// Untrusted bytes (the path, the Host field, regex captures of the path)
// may reach a header value or a request target only if they cannot break
// the message's framing: an expansion that would put a control byte (CR,
// LF, NUL and the rest of C0 but HTAB, and DEL) in a field value, or
// anything but a visible ASCII or obs-text byte in a target, fails with
// ErrUnsafe, and the caller refuses the request (server/router answers
// 400). The parser already rejects such bytes in a request head, so this
// is a second line, not the first; it is what keeps a decoded or future
// variable from ever splitting a header.
//
// The package imports nothing of the server: server/router applies the
// policies to a server.Request, and server/config parses them.
package rewrite
