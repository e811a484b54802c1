// Package h3test holds what the HTTP/3 tests share across packages: a raw
// HTTP/3 client that writes requests frame by frame on quic-go streams
// (for tests that break the rules or act at the stream level), the
// captured Initials of a flood, a client socket that stops acknowledging,
// and ngtcp2's HTTP/3 client. The tests of server (kernel UDP), of xdp
// (the AF_XDP PacketConn) and of cmd/simdedge use it, so that a flood or
// a client is written once and run on every datagram path.
//
// It encodes frames itself (RFC 9114 §7) rather than with server's
// parser, so that the server is checked against an independent peer.
package h3test
