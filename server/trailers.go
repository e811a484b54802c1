package server

import "github.com/simdedge/simdedge/internal/ascii"

// Trailer fields (RFC 9110 §6.5, RFC 9112 §7.1.2) on HTTP/1.1 responses.
// A handler that may have trailers (a proxy relaying a chunked upstream
// response) calls EnableTrailers before the head is sent; the response then
// goes out chunked, and the fields given to AddTrailer follow the last
// chunk. Only a client that said "TE: trailers" (RFC 9110 §10.1.4) gets
// them: for any other client they are dropped, which §6.5.1 allows for
// fields a recipient may ignore, and the response keeps the framing it
// would have had (Content-Length for a small body).

// EnableTrailers reports whether trailers added with AddTrailer will be
// sent: the client asked with "TE: trailers" over HTTP/1.1, the head is not
// sent yet and no length was declared. When it is true the response is
// framed chunked. It looks at the request's TE field only when called, so
// responses that never call it pay nothing.
func (w *ResponseWriter) EnableTrailers() bool {
	if w.committed || w.http10 || w.headReq || w.clen >= 0 || !w.bodyAllowed() {
		return false
	}
	if w.h2 != nil || w.h3 != nil {
		// HTTP/2 has no chunked framing to negotiate: a trailer section
		// is a last HEADERS frame (RFC 9113 §8.1), which every client
		// must accept (gRPC's grpc-status comes that way). h2Trailers
		// hands w.trailers to the stream. HTTP/3 likewise (RFC 9114
		// §4.1).
		w.trailerOK = true
		return true
	}
	c, ok := w.sink.(*conn)
	if !ok {
		return false
	}
	hs := c.req.head.Headers
	for i := hs.Index("TE", 0); i >= 0; i = hs.Index("TE", i+1) {
		if containsToken(bytesView(hs[i].Value), "trailers") {
			w.trailerOK = true
			return true
		}
	}
	return false
}

// AddTrailer adds a trailer field, sent after the last chunk if
// EnableTrailers said so, else dropped. As in AddHeader, a name that is not
// a token is dropped and CR, LF and NUL in the value become spaces; fields
// that frame or route the message (RFC 9110 §6.5.1: Content-Length,
// Transfer-Encoding, Connection, Host, Trailer...) are dropped, since a
// recipient must not act on them.
func (w *ResponseWriter) AddTrailer(name, value []byte) {
	if !w.trailerOK || w.aborted {
		return
	}
	n := bytesView(name)
	if !ascii.IsToken(n) || forbiddenTrailer(n) {
		return
	}
	w.trailers = append(w.trailers, name...)
	w.trailers = append(w.trailers, ": "...)
	start := len(w.trailers)
	w.trailers = append(w.trailers, value...)
	for i := start; i < len(w.trailers); i++ {
		if c := w.trailers[i]; c == '\r' || c == '\n' || c == 0 {
			w.trailers[i] = ' '
		}
	}
	w.trailers = append(w.trailers, "\r\n"...)
}

// forbiddenTrailers are the fields a sender must not put in a trailer
// section (RFC 9110 §6.5.1: framing, routing, request modifiers and
// authentication) that an upstream might still send, plus the hop-by-hop
// ones, which never cross a proxy.
var forbiddenTrailers = []string{"Content-Length", "Transfer-Encoding", "Connection", "Keep-Alive",
	"Proxy-Connection", "TE", "Upgrade", "Trailer", "Host", "Content-Type", "Content-Encoding",
	"Content-Range", "Cache-Control", "Expect", "Max-Forwards", "Pragma", "Range", "Set-Cookie",
	"Authorization", "WWW-Authenticate", "Proxy-Authenticate", "Proxy-Authorization"}

func forbiddenTrailer(name string) bool {
	for _, f := range forbiddenTrailers {
		if ascii.EqualFold(name, f) {
			return true
		}
	}
	return false
}

// appendLastChunk ends a chunked body: the last chunk, the trailer
// section (if enabled) and the final CRLF.
func (w *ResponseWriter) appendLastChunk(out []byte) []byte {
	out = append(out, "0\r\n"...)
	out = append(out, w.trailers...)
	return append(out, "\r\n"...)
}
