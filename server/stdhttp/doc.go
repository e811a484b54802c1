// Package stdhttp runs standard net/http handlers on a simdedge server.
//
// Handler adapts an http.Handler to server.Handler. The adapter builds an
// *http.Request and an http.ResponseWriter for each request, with copies of
// the head as net/http's types require, so this path allocates; handlers
// written for simdedge (server.Handler) do not. What a net/http handler
// expects of its server holds here too:
//
//   - r.Context() is cancelled when the client goes away while the handler
//     runs: an HTTP/2 stream reset or a closed connection, and over
//     HTTP/1.1 a connection that ends once the request body has been read
//     (the server watches it from then on, as net/http does). It is also
//     cancelled when the handler returns.
//   - The http.ResponseWriter is an http.Flusher: Flush sends the head and
//     what was written so far (chunked, unless Content-Length was set).
//   - Over HTTP/1.1 it is also an http.Hijacker: before the response has
//     started, Hijack hands a stream connection over, with the bytes the
//     server had already read, for a handler that speaks another protocol
//     after its own response head (a WebSocket library's upgrade, say). On
//     a message transport it fails with server.ErrNoHijack.
//   - The request body streams from the connection; its length and
//     Transfer-Encoding are those of the request.
//
// Responses without a Content-Type get "text/plain; charset=utf-8"
// instead of net/http's content sniffing, which would buffer the first
// 512 bytes. Informational responses (1xx) a handler writes are dropped.
package stdhttp
