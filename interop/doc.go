// Package interop runs real third-party clients and servers through the
// simdedge binary, end to end on loopback: a WebSocket client and server
// (github.com/coder/websocket) through the proxy's Upgrade tunnel, an
// HTTP/1.1 client to an h2c target, and a grpc-go client and server in all
// four call kinds. It is a module of its own so that those
// libraries never enter simdedge's go.mod. The tests build cmd/simdedge
// from the parent module once (TestMain) and run it per engine with a
// generated configuration, stopping it by its PID.
package interop
