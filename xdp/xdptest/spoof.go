package xdptest

import (
	"encoding/binary"
	"fmt"

	"golang.org/x/sys/unix"
)

// Spoofed header lengths and fields (RFC 791, RFC 768).
const (
	ipv4HeaderLen = 20
	udpHeaderLen  = 8
	ipv4VerIHL    = 0x45 // version 4, 5 words of header
	ipv4DF        = 0x4000
	ipv4TTL       = 64
)

// Spoofer sends UDP datagrams from the client namespace with any source
// address: a raw socket (IP_HDRINCL), as a flood from forged addresses
// would arrive. The kernel fills in the IPv4 checksum; the UDP checksum
// is left 0 (none, RFC 768), which receivers accept.
type Spoofer struct {
	fd  int
	pkt []byte
}

// NewSpoofer opens the raw socket in v's client namespace; Close it.
func (v *Veth) NewSpoofer() (*Spoofer, error) {
	var fd int
	err := InNS(v.ClientNS, func() (err error) {
		fd, err = unix.Socket(unix.AF_INET, unix.SOCK_RAW, unix.IPPROTO_RAW)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("xdptest: raw socket: %w", err)
	}
	return &Spoofer{fd: fd}, nil
}

// Send sends payload from src:sport to dst:dport.
func (s *Spoofer) Send(src [4]byte, sport uint16, dst [4]byte, dport uint16, payload []byte) error {
	n := ipv4HeaderLen + udpHeaderLen + len(payload)
	p := append(s.pkt[:0], make([]byte, ipv4HeaderLen+udpHeaderLen)...)
	p[0] = ipv4VerIHL
	binary.BigEndian.PutUint16(p[2:], uint16(n))
	binary.BigEndian.PutUint16(p[6:], ipv4DF)
	p[8] = ipv4TTL
	p[9] = unix.IPPROTO_UDP
	copy(p[12:16], src[:])
	copy(p[16:20], dst[:])
	u := p[ipv4HeaderLen:]
	binary.BigEndian.PutUint16(u[0:], sport)
	binary.BigEndian.PutUint16(u[2:], dport)
	binary.BigEndian.PutUint16(u[4:], uint16(udpHeaderLen+len(payload)))
	p = append(p, payload...)
	s.pkt = p
	return unix.Sendto(s.fd, p, 0, &unix.SockaddrInet4{Addr: dst})
}

// Close closes the socket.
func (s *Spoofer) Close() error { return unix.Close(s.fd) }
