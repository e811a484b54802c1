// Package server is simdedge's serving core: connection loops over stream
// and message transports, the handler API with zero-copy request views, and
// an adapter for standard http.Handlers. The router (server/router), the
// reverse proxy (server/proxy) and the YAML configuration (server/config)
// build on it.
//
// # Transports
//
// The core consumes two kinds of transport, both defined here by their
// consumer so that new ones plug in without changes to the core:
//
//   - StreamListener / Stream: a byte stream per connection. Kernel TCP
//     (TCPListener over net.Listen), TCP on a userspace stack over AF_XDP
//     (package xdp), and MemStreamListener for tests. HTTP/1.1 frames the
//     messages: keep-alive, pipelining (responses in order, written in one
//     Write per batch), Content-Length and chunked bodies,
//     Expect: 100-continue.
//   - MessageListener / Message: one request per message (RDMA send/recv,
//     UDP datagrams in UMEM). The response goes back as one message, or a
//     sequence of at most MaxReply bytes each. MemMessageListener is the
//     in-memory implementation for tests.
//
// One goroutine serves each stream connection (ServeStream): Go's netpoller
// makes that the natural model. Kernel TCP may instead be served by an
// epoll event loop (ServeLoop, or ServeTCP with EngineLoop; Linux) that
// reads, parses and answers requests in one pass on its own goroutine when
// the handler says they never block (Inliner, Inline), forwards proxied
// requests itself over non-blocking upstream connections in its epoll set
// when Options.LoopProxy is on and the handler is a LoopProxier, and hands
// every other connection to the goroutine model with its buffered bytes.
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
// in-flight requests, closes idle connections and is bounded by Drain.
package server
