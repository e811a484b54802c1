// Package server is simdedge's serving core: connection loops over stream
// and message transports, and the handler API with zero-copy request views.
// The router (server/router), the reverse proxy (server/proxy), the YAML
// configuration (server/config) and the adapter for standard http.Handlers
// (server/stdhttp) build on it.
//
// # Transports
//
// The core consumes two kinds of transport, both defined here by their
// consumer so that new ones plug in without changes to the core:
//
//   - StreamListener / Stream: a byte stream per connection. Kernel TCP
//     (TCPListener over net.Listen), TCP on a userspace stack over AF_XDP
//     (package xdp), and servertest.StreamListener for tests. HTTP/1.1
//     frames the messages: keep-alive, pipelining (responses in order,
//     written in one Write per batch), Content-Length and chunked bodies,
//     Expect: 100-continue.
//   - MessageListener / Message: one request per message (RDMA send/recv,
//     UDP datagrams in UMEM). The response goes back as one message, or a
//     sequence of at most MaxReply bytes each. servertest.MessageListener
//     is the in-memory implementation for tests.
//
// One goroutine serves each stream connection (ServeStream): Go's netpoller
// makes that the natural model. Kernel TCP may instead be served by an
// epoll event loop (ServeLoop, or ServeTCP with EngineLoop; Linux) that
// reads, parses and answers requests in one pass on its own goroutine when
// the request's plan runs without blocking (plan.go: a Router's route, its
// steps and an action that is an Inliner, Inline), forwards proxied
// requests itself over non-blocking upstream connections in its epoll set
// when Options.LoopProxy is on and the plan's action is a LoopProxier, and
// hands every other connection to the goroutine model with its buffered
// bytes and its plan. Every engine looks a request's route up once.
// Everything a connection reuses (read buffer, output buffer, Request,
// ResponseWriter, JSON parser) lives in a pooled conn, so a warm keep-alive
// connection serving a static response allocates nothing on either engine
// (TestZeroAllocKeepAlive, TestLoopZeroAlloc).
//
// # Zero copy, and who owns a byte
//
// A request's bytes live in one buffer owned by the transport. Request's
// accessors return views into it, valid until the handler returns; to keep
// anything longer, copy it (Request.Clone). Builds with the simdedgedebug
// tag poison released buffers, so a retained view is caught by tests
// (poison_test.go).
//
// # Safety defaults
//
// Input that parse/http rejects is answered with its status (400, 413,
// 414, 431, 501, 505) and "Connection: close", and the connection closes;
// no handler sees it. Every timeout has a finite default (Timeouts): a
// client that trickles its head is dropped after ReadHeader, unlike
// net/http's and fasthttp's defaults. Shutdown stops accepting, finishes
// in-flight requests, closes idle connections and is bounded by Drain.//
// # HTTP/2
//
// A connection speaks HTTP/2 (RFC 9113) when TLS negotiated "h2" by ALPN
// (a tls.Config whose NextProtos offers it) or, on a listener given to
// EnableH2C, when it starts with the connection preface (h2c with prior
// knowledge). The preface is recognised where the first request failed to
// parse as HTTP/1.1, so HTTP/1.1 pays nothing for it. Frames are read and
// written with golang.org/x/net/http2's Framer and header blocks decoded
// and encoded with its hpack package; the protocol state (streams, flow
// control, SETTINGS, GOAWAY, the protections) lives in the h2*.go files.
// Each stream gets its own Request and ResponseWriter: the router, the
// built-in handlers, Go handlers and the proxy run unchanged. Requests
// without a body that the Inliner takes (respond, echo, 404) run on the
// connection's goroutine; the others on a goroutine per stream, at most
// HTTP2Limits.MaxConcurrentStreams per connection. On the loop engine an
// HTTP/2 connection is handed to the goroutine path once, when its preface
// arrives (net.FileConn, as for any hand-off; loop-driven TLS included).
//
// What is copied, and why: an HTTP/1.1 head's views point into the read
// buffer, but no byte of an HTTP/2 header block is a field (HPACK codes
// them as Huffman strings and table references), so the decoded fields are
// copied into a buffer of the stream (pooled with it) and the head's views
// point there; cookie crumbs are joined into one field and :authority
// becomes Host. DATA payloads are copied out of the frame reader's buffer,
// which the next frame reuses, into the stream's body buffer, bounded by
// its receive window. Response bodies are copied once into the stream's
// output and sent as DATA frames as the windows allow; the head becomes a
// HEADERS frame (no chunked framing, no Connection fields).
package server
