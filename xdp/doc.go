// Package xdp is simdedge's AF_XDP (kernel bypass) transport.
//
// An XDP program (package xdp/bpf, C built with bpf2go) runs on every frame
// the interface receives and redirects IPv4 TCP to the service port and UDP
// to the datagram port, for the configured address, into the AF_XDP socket
// of the frame's RX queue; everything else (ARP, ICMP, IPv6, other ports,
// fragments, IPv4 options, malformed frames) goes to the kernel. It is
// attached through a bpf_link, so it is detached when the process exits,
// however it exits.
//
// Listen opens one AF_XDP socket per configured RX queue (package
// xdp/internal/xsk: UMEM, fill/RX/TX/completion rings). The Listener is
// then:
//
//   - the frame device of a userspace TCP stack (xdp/netstack): MAC, MTU,
//     Transmit, and HandleStream for the frames steered to the TCP port;
//   - through Datagrams, a server.MessageListener for the datagram fast
//     path: one HTTP/1.1 request per UDP datagram, parsed in place in the
//     UMEM frame, the response written into a transmit frame behind
//     Ethernet, IPv4 and UDP headers built here. A response larger than one
//     datagram is replaced by a 507 that tells the client to use TCP.
//
// DatagramClient is the client of the fast path, over a plain UDP socket.
//
// Ownership: a received frame belongs to the RX loop until it hands it on;
// a stream frame is valid only during the HandleStream call, a datagram
// until the server releases its message. Frames then return to the fill
// ring. Listen needs root (or CAP_BPF, CAP_NET_ADMIN and CAP_NET_RAW), and
// its errors say what is missing (ErrPermission, ErrNoInterface,
// ErrKernel, ErrDriver, ErrQueue, ErrConfig).
package xdp
