package xdp

import "encoding/binary"

// Wire headers as byte-slice views with named offsets (RFC 894 Ethernet II,
// RFC 791 IPv4 without options, RFC 768 UDP, RFC 9293 TCP). The XDP program
// already chose the frames that reach user space; these checks repeat the
// ones user space relies on, since a frame must never be trusted to match
// what the program saw.
const (
	ethLen      = 14
	ethDst      = 0
	ethSrc      = 6
	ethType     = 12
	etherTypeV4 = 0x0800

	ipv4Len      = 20 // the program steers only option-less headers
	ipVerIHL     = 0
	ipv4VerIHL   = 0x45
	ipTotalLen   = 2
	ipID         = 4
	ipFlagsFrag  = 6
	ipFragMask   = 0x3fff // more-fragments flag and fragment offset
	ipDontFrag   = 0x4000
	ipTTL        = 8
	ipProto      = 9
	ipChecksum   = 10
	ipSrc        = 12
	ipDst        = 16
	protoTCP     = 6
	protoUDP     = 17
	defaultTTL   = 64
	udpLen       = 8
	udpSrcPort   = 0
	udpDstPort   = 2
	udpLength    = 4
	udpChecksum  = 6
	tcpMinLen    = 20
	tcpDstPort   = 2
	udpHeadersAt = ethLen + ipv4Len + udpLen // where a datagram's payload starts
)

// frameKind is what the RX loop does with a frame.
type frameKind uint8

const (
	kindOther    frameKind = iota // not ours (or malformed): recycled
	kindStream                    // TCP to the service port: the stream handler
	kindDatagram                  // UDP to the datagram port: the message path
)

// classify checks a received frame's headers and returns its kind and,
// for a datagram, the payload's bounds. addr is the steered address in
// network byte order (0: any).
func classify(f []byte, addr [4]byte, anyAddr bool, tcpPort, udpPort uint16) (k frameKind, start, end int) {
	if len(f) < ethLen+ipv4Len || binary.BigEndian.Uint16(f[ethType:]) != etherTypeV4 {
		return kindOther, 0, 0
	}
	ip := f[ethLen:]
	total := int(binary.BigEndian.Uint16(ip[ipTotalLen:]))
	if ip[ipVerIHL] != ipv4VerIHL || total < ipv4Len || total > len(ip) ||
		binary.BigEndian.Uint16(ip[ipFlagsFrag:])&ipFragMask != 0 ||
		!anyAddr && [4]byte(ip[ipDst:ipDst+4]) != addr {
		return kindOther, 0, 0
	}
	ip = ip[:total] // drop Ethernet padding
	l4 := ip[ipv4Len:]
	switch ip[ipProto] {
	case protoTCP:
		if tcpPort == 0 || len(l4) < tcpMinLen || binary.BigEndian.Uint16(l4[tcpDstPort:]) != tcpPort {
			return kindOther, 0, 0
		}
		return kindStream, 0, 0
	case protoUDP:
		if udpPort == 0 || len(l4) < udpLen || binary.BigEndian.Uint16(l4[udpDstPort:]) != udpPort {
			return kindOther, 0, 0
		}
		n := int(binary.BigEndian.Uint16(l4[udpLength:]))
		if n < udpLen || n > len(l4) || checksum(ip[:ipv4Len], 0) != 0 {
			return kindOther, 0, 0
		}
		l4 = l4[:n]
		// A zero checksum means the sender computed none (RFC 768).
		if binary.BigEndian.Uint16(l4[udpChecksum:]) != 0 && checksum(l4, pseudoHeader(ip, n)) != 0 {
			return kindOther, 0, 0
		}
		return kindDatagram, udpHeadersAt, udpHeadersAt + n - udpLen
	}
	return kindOther, 0, 0
}

// pseudoHeader returns the partial sum of the IPv4 pseudo-header
// (addresses, protocol, UDP length) that the UDP checksum covers.
func pseudoHeader(ip []byte, udpLength int) uint64 {
	return uint64(binary.BigEndian.Uint32(ip[ipSrc:])) + uint64(binary.BigEndian.Uint32(ip[ipDst:])) +
		protoUDP + uint64(udpLength)
}

// checksum returns the Internet checksum (RFC 1071) of b, starting from the
// partial sum initial: the one's complement of the one's-complement sum of
// the 16-bit big-endian words. Over data that carries its own checksum the
// result is 0. It adds 32-bit words into a 64-bit sum, which defers the
// end-around carries to the fold at the end.
func checksum(b []byte, initial uint64) uint16 {
	sum := initial
	for len(b) >= 8 {
		v := binary.BigEndian.Uint64(b)
		sum += v>>32 + v&0xffffffff
		b = b[8:]
	}
	if len(b) >= 4 {
		sum += uint64(binary.BigEndian.Uint32(b))
		b = b[4:]
	}
	if len(b) >= 2 {
		sum += uint64(binary.BigEndian.Uint16(b))
		b = b[2:]
	}
	if len(b) == 1 {
		sum += uint64(b[0]) << 8
	}
	// Fold 64 -> 32 -> 16 bits, adding the carries back in.
	sum = sum>>32 + sum&0xffffffff
	sum = sum>>32 + sum&0xffffffff
	s := uint32(sum)
	s = s>>16 + s&0xffff
	s = s>>16 + s&0xffff
	return ^uint16(s)
}

// endpoints are the addresses of an outgoing datagram.
type endpoints struct {
	dstMAC, srcMAC [6]byte
	srcIP, dstIP   [4]byte
	sport, dport   uint16
}

// replyEndpoints are those of the reply to the datagram in frame req: its
// addresses and ports swapped.
func replyEndpoints(req []byte) endpoints {
	ip := req[ethLen:]
	u := ip[ipv4Len:]
	return endpoints{
		dstMAC: [6]byte(req[ethSrc : ethSrc+6]), srcMAC: [6]byte(req[ethDst : ethDst+6]),
		srcIP: [4]byte(ip[ipDst : ipDst+4]), dstIP: [4]byte(ip[ipSrc : ipSrc+4]),
		sport: binary.BigEndian.Uint16(u[udpDstPort:]), dport: binary.BigEndian.Uint16(u[udpSrcPort:]),
	}
}

// writeReplyHeaders writes, in front of a payload of n bytes already at
// out[udpHeadersAt:], the Ethernet, IPv4 and UDP headers of the reply to
// the datagram whose frame is req: addresses and ports swapped, checksums
// computed. It returns the frame's length.
func writeReplyHeaders(out, req []byte, n int) int {
	return writeHeaders(out, replyEndpoints(req), n)
}

// writeHeaders writes, in front of a payload of n bytes already at
// out[udpHeadersAt:], the Ethernet, IPv4 and UDP headers from e, with
// checksums. It returns the frame's length.
func writeHeaders(out []byte, e endpoints, n int) int {
	copy(out[ethDst:ethDst+6], e.dstMAC[:])
	copy(out[ethSrc:ethSrc+6], e.srcMAC[:])
	binary.BigEndian.PutUint16(out[ethType:], etherTypeV4)

	ip := out[ethLen : ethLen+ipv4Len]
	ip[ipVerIHL] = ipv4VerIHL
	ip[1] = 0 // DSCP/ECN: Not-ECT
	binary.BigEndian.PutUint16(ip[ipTotalLen:], uint16(ipv4Len+udpLen+n))
	binary.BigEndian.PutUint16(ip[ipID:], 0) // DF set: the ID identifies no fragments (RFC 6864)
	binary.BigEndian.PutUint16(ip[ipFlagsFrag:], ipDontFrag)
	ip[ipTTL] = defaultTTL
	ip[ipProto] = protoUDP
	binary.BigEndian.PutUint16(ip[ipChecksum:], 0)
	copy(ip[ipSrc:ipSrc+4], e.srcIP[:])
	copy(ip[ipDst:ipDst+4], e.dstIP[:])
	binary.BigEndian.PutUint16(ip[ipChecksum:], checksum(ip, 0))

	u := out[ethLen+ipv4Len : udpHeadersAt+n]
	binary.BigEndian.PutUint16(u[udpSrcPort:], e.sport)
	binary.BigEndian.PutUint16(u[udpDstPort:], e.dport)
	binary.BigEndian.PutUint16(u[udpLength:], uint16(udpLen+n))
	binary.BigEndian.PutUint16(u[udpChecksum:], 0)
	c := checksum(u, pseudoHeader(ip, udpLen+n))
	if c == 0 {
		c = 0xffff // 0 means "no checksum" (RFC 768)
	}
	binary.BigEndian.PutUint16(u[udpChecksum:], c)
	return udpHeadersAt + n
}
