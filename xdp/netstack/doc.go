// Package netstack runs TCP for the xdp transport on gVisor's userspace
// network stack (gvisor.dev/gvisor/pkg/tcpip), so that HTTP over AF_XDP is
// served by the same server core, router, handlers and proxy as kernel TCP.
//
// The stack is wired to the outside world through a Device, which moves
// whole Ethernet frames: in production an AF_XDP socket of package xdp, in
// tests anything that carries frames. Frames come in through Stack.Deliver
// (the RX loop hands over every TCP frame the XDP program steered to the
// service port) and go out through Device.Transmit. Between the two sits a
// link endpoint of this package (link.go), not one of gVisor's: it parses
// and writes the Ethernet header, learns neighbours and counts drops.
//
// # Sharing the kernel's address
//
// The stack serves the address the kernel already owns on the interface;
// the XDP program steers only the service port to AF_XDP and passes ARP,
// ICMP and everything else to the kernel. So the stack never sees ARP and
// never sends it: it learns each peer's MAC address from the source of the
// frames the peer sends (neighbors.go) and answers to that MAC. A server
// only answers, so the peer's MAC is always known before the first reply.
// For a peer behind a router the learnt MAC is the router's, which is where
// the reply must go. Learning is bounded (Config.MaxNeighbors) and, like
// ARP, trusts the local link: a host on the same segment that spoofs a
// client's source address diverts the replies to that client.
//
// # Checksums
//
// AF_XDP gives no checksum offload information, so the link endpoint does
// not claim receive checksum offload and gVisor verifies the IPv4 and TCP
// checksums of every segment in software; it also computes the checksums of
// every segment it sends. A peer whose NIC leaves checksums to offload
// (a veth with "tx" offload on) therefore has all its segments dropped:
// turn that offload off on the peer (FACTS.md).
//
// # TCP
//
// Stack.Listener is a server.StreamListener: server.Server.ServeStream
// serves it unchanged. Its connections are gonet.TCPConn values, whose
// deadlines wake blocked reads and writes, so Shutdown and the server's
// timeouts work as on kernel TCP. SACK is on, window scaling follows the
// buffer sizes, receive buffers auto-tune, Nagle is off and keep-alive
// probes use Go's kernel-TCP defaults (see Config).
//
// gVisor acknowledges every segment as soon as it has processed it, before
// the application can answer. The link endpoint therefore holds each pure
// ACK for up to Config.ACKDelay and drops it when the connection's next
// segment (normally the response) carries the same acknowledgement, so a
// keep-alive request costs one frame out, as on kernel TCP. The ACKs of
// bulk data (a full segment received) go out at once (ackhold.go).
//
// Only IPv4 is served.
package netstack
