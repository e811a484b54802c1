// Package rdma is the RDMA transport for server, over libfabric's send and
// receive queues.
//
// The low-level layer (this file's neighbours fabric.go, endpoint.go,
// region.go, errors.go) is a thin cgo binding of libfabric: a Fabric is
// fi_getinfo + fi_fabric + fi_domain for one provider ("tcp", "verbs", ...);
// a Listener is a passive endpoint listening through an event queue; an
// Endpoint is a connected FI_EP_MSG endpoint (the reliable-connected queue
// pair) with its own completion queue; a Region is memory
// mapped outside the Go heap and registered with the domain, so the provider
// (or the NIC) may read and write it while Go code runs.
//
// Work is posted with a caller-chosen 64-bit id (PostRecv, PostSend,
// PostRead, PostWrite) and completes as a Completion carrying that id. Poll
// drains up to a slice of completions in one cgo call, because a cgo call
// costs about 40 ns and a request needs several completions; Wait blocks
// (poll(2) on the queue's file descriptor) until a completion, a
// disconnect, Close or the timeout.
//
// Software providers progress only inside the application's calls: with
// tcp every queue read is an epoll_wait system call, and one side's RDMA
// READ of the other's memory advances only while the other side reads its
// queue. A server loop that always waits on its endpoints satisfies this.
//
// The message transport on top (transport*.go, wire protocol in proto.go)
// serves server.Messages: ListenMessages for server.ServeMessages, Dial for
// a Client, NewTarget for proxy upstreams. A request is HTTP/1.1 bytes
// (Client.RoundTrip) or a FlatBuffers request envelope of
// parse/json/envelope (Client.RoundTripEnvelope), flagged in the message
// header so that the server core reads it in place and checks it as
// strictly as HTTP (server.EnvelopeMessage).
//
// The binding needs cgo and the build tag rdma (`go build -tags rdma`, with
// Debian's libfabric-dev installed). Without them the package still builds:
// every constructor returns ErrNotSupported. The same code runs over
// libfabric's software providers (tcp, sockets) here and over the verbs
// provider on InfiniBand/RoCE; software providers are not RDMA hardware,
// they only exercise the same calls.
package rdma
