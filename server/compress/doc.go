// Package compress is the response compression policy of a route
// (issue 23): which content codings (gzip and zstd from
// github.com/klauspost/compress, br from github.com/andybalholm/brotli),
// which media types, the minimum length, the negotiation of the client's
// Accept-Encoding, and pools of encoders. It implements
// server.Compressor; the server's ResponseWriter applies it, so every
// engine and every action of a route (respond, echo, files, Go handlers,
// both proxy paths) compresses the same way.
//
// Encoders are pooled per coding and level for the life of the process
// (a klauspost gzip writer holds ~1 MiB of state, a zstd encoder more):
// a request takes one from its pool and gives it back when the response
// ends, so no encoder state is allocated per request once the pools are
// warm.
package compress
