// Package proxyproto parses PROXY protocol headers, versions 1 (text) and
// 2 (binary), as HAProxy's specification (proxy-protocol.txt, 2020-03-05)
// defines them: the header a load balancer sends before the client's
// bytes, naming the client's address and port. The parser works on the
// caller's buffer and is incremental (ErrNeedMore consumes nothing), so
// the event loop runs it on its read buffer and goroutines on theirs;
// it imports nothing of the server. It is fuzzed against
// github.com/pires/go-proxyproto (fuzz/proxyprotodiff).
package proxyproto

import (
	"encoding/binary"
	"errors"
	"net/netip"
	"unsafe"
)

// Errors of Parse.
var (
	// ErrNeedMore: b is a prefix of a possible header; read more.
	ErrNeedMore = errors.New("proxyproto: incomplete header")
	// ErrNotProxy: b does not start with a PROXY header signature.
	ErrNotProxy = errors.New("proxyproto: no PROXY header")
	// ErrInvalid: a header signature followed by a malformed header.
	ErrInvalid = errors.New("proxyproto: malformed PROXY header")
	// ErrTooLong: a version 2 header longer than MaxV2Len.
	ErrTooLong = errors.New("proxyproto: PROXY header too long")
)

const (
	// MaxV1Len is the longest version 1 header, CRLF included
	// (specification §2.1: 107 bytes).
	MaxV1Len = 107
	// v2HeadLen is the fixed part of a version 2 header: signature,
	// version and command, family and protocol, length.
	v2HeadLen = 16
	// MaxV2Len bounds a version 2 header (fixed part, addresses and
	// TLVs). The format allows 64 KiB of TLVs; load balancers send a
	// few hundred bytes (TLS details, a unique ID), and a connection's
	// first read buffer is 4 KiB.
	MaxV2Len = 2048
)

var (
	v1Sig = []byte("PROXY ")
	v2Sig = []byte("\r\n\r\n\x00\r\nQUIT\n")
)

// Header is a parsed PROXY header.
type Header struct {
	// Version is 1 or 2.
	Version int
	// Local: the header names no client (v1 UNKNOWN, v2 LOCAL command
	// or an unspecified or UNIX family): the connection's own peer
	// stands for the client (a load balancer's health check).
	Local bool
	// Source is the client's address and port, Destination the
	// address the client connected to (zero when Local).
	Source, Destination netip.AddrPort
}

// Parse reads a PROXY header at the start of b and returns its length.
// It does not allocate.
func Parse(b []byte) (n int, h Header, err error) {
	if len(b) == 0 {
		return 0, h, ErrNeedMore
	}
	switch b[0] {
	case v1Sig[0]:
		if !hasPrefix(b, v1Sig) {
			return 0, h, prefixErr(b, v1Sig)
		}
		return parseV1(b)
	case v2Sig[0]:
		if !hasPrefix(b, v2Sig) {
			return 0, h, prefixErr(b, v2Sig)
		}
		return parseV2(b)
	}
	return 0, h, ErrNotProxy
}

func hasPrefix(b, sig []byte) bool {
	return len(b) >= len(sig) && string(b[:len(sig)]) == string(sig)
}

// prefixErr: ErrNeedMore while b is a prefix of sig, else ErrNotProxy.
func prefixErr(b, sig []byte) error {
	if len(b) < len(sig) && string(b) == string(sig[:len(b)]) {
		return ErrNeedMore
	}
	return ErrNotProxy
}

// parseV1 reads "PROXY TCP4 src dst sport dport\r\n" (or TCP6, or
// "UNKNOWN" and anything up to the CRLF), §2.1.
func parseV1(b []byte) (int, Header, error) {
	h := Header{Version: 1}
	end := -1
	for i := len(v1Sig); i < len(b) && i < MaxV1Len; i++ {
		if b[i] == '\n' {
			end = i
			break
		}
	}
	if end < 0 {
		if len(b) >= MaxV1Len {
			return 0, h, ErrInvalid
		}
		return 0, h, ErrNeedMore
	}
	if b[end-1] != '\r' {
		return 0, h, ErrInvalid
	}
	line := b[len(v1Sig) : end-1]
	var f [5][]byte
	nf := 0
	for start, i := 0, 0; i <= len(line); i++ {
		if i < len(line) && line[i] != ' ' {
			continue
		}
		if nf == len(f) {
			return 0, h, ErrInvalid
		}
		f[nf] = line[start:i]
		nf++
		start = i + 1
		if nf == 1 && string(f[0]) == "UNKNOWN" {
			// The receiver must ignore the rest of the line.
			h.Local = true
			return end + 1, h, nil
		}
	}
	var want4 bool
	switch string(f[0]) {
	case "TCP4":
		want4 = true
	case "TCP6":
	default:
		return 0, h, ErrInvalid
	}
	if nf != 5 {
		return 0, h, ErrInvalid
	}
	src, ok1 := parseAddr(f[1], want4)
	dst, ok2 := parseAddr(f[2], want4)
	sp, ok3 := parsePort(f[3])
	dp, ok4 := parsePort(f[4])
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return 0, h, ErrInvalid
	}
	h.Source, h.Destination = netip.AddrPortFrom(src, sp), netip.AddrPortFrom(dst, dp)
	return end + 1, h, nil
}

func parseAddr(b []byte, want4 bool) (netip.Addr, bool) {
	if len(b) == 0 || len(b) > len("ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255") {
		return netip.Addr{}, false
	}
	// A view, not a copy: ParseAddr keeps nothing of its argument
	// (a zone would be interned as a copy, and is refused anyway).
	a, err := netip.ParseAddr(unsafe.String(unsafe.SliceData(b), len(b)))
	if err != nil || a.Zone() != "" || a.Is4() != want4 {
		return netip.Addr{}, false
	}
	return a, true
}

// parsePort reads a decimal port, 0-65535, without a sign or leading
// zeros (the specification writes ports as plain numbers).
func parsePort(b []byte) (uint16, bool) {
	if len(b) == 0 || len(b) > 5 || len(b) > 1 && b[0] == '0' {
		return 0, false
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return uint16(n), n <= 0xffff
}

// Version 2 (§2.2): the fixed part's fields.
const (
	v2Version   = 0x20
	cmdLocal    = 0x0
	cmdProxy    = 0x1
	famUnspec   = 0x0
	famInet     = 0x1
	famInet6    = 0x2
	famUnix     = 0x3
	protoStream = 0x1
	protoDgram  = 0x2
	inetLen     = 12  // two IPv4 addresses and two ports
	inet6Len    = 36  // two IPv6 addresses and two ports
	unixLen     = 216 // two 108-byte paths
)

func parseV2(b []byte) (int, Header, error) {
	h := Header{Version: 2}
	if len(b) < v2HeadLen {
		return 0, h, ErrNeedMore
	}
	verCmd, famProto := b[12], b[13]
	length := int(binary.BigEndian.Uint16(b[14:16]))
	if verCmd&0xf0 != v2Version {
		return 0, h, ErrInvalid
	}
	if v2HeadLen+length > MaxV2Len {
		return 0, h, ErrTooLong
	}
	if len(b) < v2HeadLen+length {
		return 0, h, ErrNeedMore
	}
	n := v2HeadLen + length
	body := b[v2HeadLen:n]
	fam, proto := famProto>>4, famProto&0x0f
	switch verCmd & 0x0f {
	case cmdLocal:
		// The connection was made by the proxy itself: its own
		// address stands; the address block is skipped.
		h.Local = true
		return n, h, nil
	case cmdProxy:
	default:
		return 0, h, ErrInvalid
	}
	// §2.2: "only the following protocol and family bytes are valid:
	// 0x00, 0x11, 0x12, 0x21, 0x22, 0x31, 0x32 ... Other values ...
	// must be rejected as invalid by receivers."
	if famProto != 0 && (proto == 0 || proto > protoDgram || fam == famUnspec || fam > famUnix) {
		return 0, h, ErrInvalid
	}
	switch fam {
	case famInet:
		if length < inetLen {
			return 0, h, ErrInvalid
		}
		src := netip.AddrFrom4([4]byte(body[0:4]))
		dst := netip.AddrFrom4([4]byte(body[4:8]))
		h.Source = netip.AddrPortFrom(src, binary.BigEndian.Uint16(body[8:10]))
		h.Destination = netip.AddrPortFrom(dst, binary.BigEndian.Uint16(body[10:12]))
	case famInet6:
		if length < inet6Len {
			return 0, h, ErrInvalid
		}
		src := netip.AddrFrom16([16]byte(body[0:16]))
		dst := netip.AddrFrom16([16]byte(body[16:32]))
		h.Source = netip.AddrPortFrom(src, binary.BigEndian.Uint16(body[32:34]))
		h.Destination = netip.AddrPortFrom(dst, binary.BigEndian.Uint16(body[34:36]))
	case famUnix:
		if length < unixLen {
			return 0, h, ErrInvalid
		}
		h.Local = true // no IP address to stand for the client
	default: // famUnspec: the receiver must ignore the addresses
		h.Local = true
	}
	return n, h, nil
}

// AppendV1 appends a version 1 header for a connection from src to dst
// (UNKNOWN when either is not valid or their families differ).
func AppendV1(b []byte, src, dst netip.AddrPort) []byte {
	s, d := src.Addr().Unmap(), dst.Addr().Unmap()
	if !src.IsValid() || !dst.IsValid() || s.Is4() != d.Is4() {
		return append(b, "PROXY UNKNOWN\r\n"...)
	}
	if s.Is4() {
		b = append(b, "PROXY TCP4 "...)
	} else {
		b = append(b, "PROXY TCP6 "...)
	}
	b = s.AppendTo(b)
	b = append(b, ' ')
	b = d.AppendTo(b)
	b = append(b, ' ')
	b = appendUint(b, src.Port())
	b = append(b, ' ')
	b = appendUint(b, dst.Port())
	return append(b, "\r\n"...)
}

func appendUint(b []byte, v uint16) []byte {
	var d [5]byte
	i := len(d)
	for {
		i--
		d[i] = byte('0' + v%10)
		v /= 10
		if v == 0 {
			break
		}
	}
	return append(b, d[i:]...)
}

// AppendV2 appends a version 2 PROXY header (TCP over IPv4 or IPv6; LOCAL
// when either address is not valid or their families differ).
func AppendV2(b []byte, src, dst netip.AddrPort) []byte {
	b = append(b, v2Sig...)
	s, d := src.Addr().Unmap(), dst.Addr().Unmap()
	if !src.IsValid() || !dst.IsValid() || s.Is4() != d.Is4() {
		return append(b, v2Version|cmdLocal, famUnspec<<4, 0, 0)
	}
	if s.Is4() {
		b = append(b, v2Version|cmdProxy, famInet<<4|protoStream, 0, inetLen)
		s4, d4 := s.As4(), d.As4()
		b = append(b, s4[:]...)
		b = append(b, d4[:]...)
	} else {
		b = append(b, v2Version|cmdProxy, famInet6<<4|protoStream, 0, inet6Len)
		s16, d16 := s.As16(), d.As16()
		b = append(b, s16[:]...)
		b = append(b, d16[:]...)
	}
	b = binary.BigEndian.AppendUint16(b, src.Port())
	return binary.BigEndian.AppendUint16(b, dst.Port())
}
