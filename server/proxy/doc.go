// Package proxy is simdedge's reverse proxy: a server.Handler that forwards
// requests to an Upstream, a pool of targets chosen round-robin, each with a
// pool of keep-alive connections.
//
// Request and response bodies stream both ways without being buffered
// whole: memory per exchange is bounded by the connection buffers whatever
// the body size. Hop-by-hop fields (RFC 9110 §7.6.1: Connection, the fields
// it names, Keep-Alive, Proxy-Connection, TE, Transfer-Encoding, Upgrade)
// are removed in both directions; X-Forwarded-For gets the client's
// address appended, X-Forwarded-Proto is set, and Via names the proxy.
// Upstream responses are parsed with parse/http's strict response parser;
// one it rejects is answered with 502. Connect and response-header
// timeouts answer 504, other upstream failures 502. A request the server's
// strict parser rejected never reaches a handler, so it is never forwarded.
//
// Upgrade (upgrade.go): an upgrade to a protocol the route allows
// (Options.Upgrades, websocket by default) is forwarded with Upgrade and
// "Connection: upgrade"; the upstream's 101 turns the connection into a
// byte tunnel (server.ResponseWriter.Tunnel) under Timeouts.TunnelIdle. An
// upgrade to another protocol is answered 403; h2c alone and HTTP/1.0
// upgrades are forwarded without the field. Upgrades run on goroutines.
//
// Targets: an absolute-form target is forwarded in origin form with Host
// set from its authority (RFC 9112 §3.2.2, target.go); "OPTIONS *" and
// CONNECT are answered by the proxy itself (server.SpecialTarget), never
// forwarded. A request is resent after a failure only under the rule of
// replay.go (nothing written, or idempotent with its body held, or an
// Idempotency-Key), and an upstream response with a transfer coding other
// than chunked is answered 502 rather than relayed with the coding dropped
// (codings.go). The response-header timeout counts from the end of the
// request.
//
// A Proxy is also a server.LoopProxier (a route plan's action): on the
// event-loop engine with server.Options.LoopProxy, requests with no body
// or a buffered one (up to 64 KiB) are forwarded by the loop itself over its own non-blocking
// keep-alive connections, with the same head rewriting, response parsing
// and 502/504 answers as ServeEdge (loop.go); chunked or larger bodies,
// Expect: 100-continue, upgrades, the special targets, message targets and
// targets named by host name are served by ServeEdge on a goroutine.
//
// Not yet: load-balancing policies other than round-robin, health checks,
// retry budgets (a resend happens only on a pooled connection the upstream
// closed before answering, under replay.go's rule), trailers (dropped),
// CONNECT (answered 501).
package proxy
