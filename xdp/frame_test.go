package xdp

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"
)

// testFrame describes an Ethernet frame for the tests; build writes it with
// valid checksums unless told otherwise.
type testFrame struct {
	etherType  uint16 // default IPv4
	verIHL     byte   // default 0x45
	options    int    // IPv4 option bytes (verIHL must say so)
	fragFlags  uint16 // flags/fragment offset field
	proto      byte   // default UDP
	src, dst   [4]byte
	sport      uint16
	dport      uint16
	payload    []byte
	padding    int  // Ethernet padding after the IP packet
	truncate   int  // cut this many bytes off the end
	totalDelta int  // added to the IP total length
	badIPSum   bool // corrupt the IPv4 header checksum
	badUDPSum  bool // corrupt the UDP checksum
	noUDPSum   bool // send UDP checksum 0
	srcMAC     [6]byte
	dstMAC     [6]byte
}

var (
	testServerIP = [4]byte{198, 18, 0, 1}
	testClientIP = [4]byte{198, 18, 0, 2}
	testOtherIP  = [4]byte{198, 19, 0, 9}
)

func (f testFrame) build() []byte {
	if f.etherType == 0 {
		f.etherType = etherTypeV4
	}
	if f.verIHL == 0 {
		f.verIHL = ipv4VerIHL
	}
	if f.proto == 0 {
		f.proto = protoUDP
	}
	b := make([]byte, ethLen)
	copy(b[ethDst:], f.dstMAC[:])
	copy(b[ethSrc:], f.srcMAC[:])
	binary.BigEndian.PutUint16(b[ethType:], f.etherType)
	ihl := ipv4Len + f.options
	ip := make([]byte, ihl)
	ip[ipVerIHL] = f.verIHL
	binary.BigEndian.PutUint16(ip[ipFlagsFrag:], f.fragFlags)
	ip[ipTTL] = 64
	ip[ipProto] = f.proto
	copy(ip[ipSrc:], f.src[:])
	copy(ip[ipDst:], f.dst[:])
	var l4 []byte
	switch f.proto {
	case protoUDP:
		l4 = make([]byte, udpLen, udpLen+len(f.payload))
		binary.BigEndian.PutUint16(l4[udpSrcPort:], f.sport)
		binary.BigEndian.PutUint16(l4[udpDstPort:], f.dport)
		l4 = append(l4, f.payload...)
		binary.BigEndian.PutUint16(l4[udpLength:], uint16(len(l4)))
	case protoTCP:
		l4 = make([]byte, tcpMinLen, tcpMinLen+len(f.payload))
		binary.BigEndian.PutUint16(l4[0:], f.sport)
		binary.BigEndian.PutUint16(l4[tcpDstPort:], f.dport)
		l4[12] = 5 << 4 // data offset
		l4 = append(l4, f.payload...)
	default:
		l4 = append([]byte{8, 0, 0, 0, 0, 0, 0, 0}, f.payload...) // ICMP echo request
	}
	binary.BigEndian.PutUint16(ip[ipTotalLen:], uint16(ihl+len(l4)+f.totalDelta))
	binary.BigEndian.PutUint16(ip[ipChecksum:], checksum(ip, 0))
	if f.badIPSum {
		ip[ipChecksum] ^= 0x10
	}
	if f.proto == protoUDP && !f.noUDPSum {
		var hdr [ipv4Len]byte
		copy(hdr[ipSrc:], f.src[:])
		copy(hdr[ipDst:], f.dst[:])
		c := checksum(l4, pseudoHeader(hdr[:], len(l4)))
		if c == 0 {
			c = 0xffff
		}
		binary.BigEndian.PutUint16(l4[udpChecksum:], c)
		if f.badUDPSum {
			l4[udpChecksum] ^= 0x10
		}
	}
	b = append(append(b, ip...), l4...)
	b = append(b, make([]byte, f.padding)...)
	return b[:len(b)-f.truncate]
}

// sum16 is the reference checksum: RFC 1071 one 16-bit word at a time.
func sum16(b []byte, initial uint64) uint16 {
	s := initial
	for i := 0; i+1 < len(b); i += 2 {
		s += uint64(binary.BigEndian.Uint16(b[i:]))
	}
	if len(b)%2 == 1 {
		s += uint64(b[len(b)-1]) << 8
	}
	for s > 0xffff {
		s = s>>16 + s&0xffff
	}
	return ^uint16(s)
}

func TestChecksumMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, 300)
	for i := range buf {
		buf[i] = byte(r.Uint32())
	}
	for _, initial := range []uint64{0, 1, 0xffff, 0x1fffe0001, 3 << 32} {
		for off := range 8 {
			for n := 0; off+n <= len(buf); n++ {
				b := buf[off : off+n]
				if got, want := checksum(b, initial), sum16(b, initial); got != want {
					t.Fatalf("checksum(len %d, off %d, initial %#x) = %#x, reference %#x", n, off, initial, got, want)
				}
			}
		}
	}
	// All-ones words exercise the end-around carries.
	ones := make([]byte, 256)
	for i := range ones {
		ones[i] = 0xff
	}
	for n := range len(ones) {
		if got, want := checksum(ones[:n], 0), sum16(ones[:n], 0); got != want {
			t.Fatalf("all-ones len %d: %#x, reference %#x", n, got, want)
		}
	}
}

func TestClassify(t *testing.T) {
	const tcpPort, udpPort = 8080, 8081
	ok := testFrame{src: testClientIP, dst: testServerIP, sport: 40000, dport: udpPort, payload: []byte("GET / HTTP/1.1\r\n\r\n")}
	tcp := ok
	tcp.proto, tcp.dport = protoTCP, tcpPort
	cases := []struct {
		name string
		f    testFrame
		want frameKind
	}{
		{"udp", ok, kindDatagram},
		{"tcp", tcp, kindStream},
		{"padded", func() testFrame { f := ok; f.padding = 20; return f }(), kindDatagram},
		{"no udp checksum", func() testFrame { f := ok; f.noUDPSum = true; return f }(), kindDatagram},
		{"bad udp checksum", func() testFrame { f := ok; f.badUDPSum = true; return f }(), kindOther},
		{"bad ip checksum", func() testFrame { f := ok; f.badIPSum = true; return f }(), kindOther},
		{"other address", func() testFrame { f := ok; f.dst = testOtherIP; return f }(), kindOther},
		{"other port", func() testFrame { f := ok; f.dport = 22; return f }(), kindOther},
		{"udp to the tcp port", func() testFrame { f := ok; f.dport = tcpPort; return f }(), kindOther},
		{"ip options", func() testFrame { f := ok; f.verIHL, f.options = 0x46, 4; return f }(), kindOther},
		{"fragment", func() testFrame { f := ok; f.fragFlags = 0x2000; return f }(), kindOther},
		{"truncated", func() testFrame { f := ok; f.truncate = 3; return f }(), kindOther},
		{"total too short", func() testFrame { f := ok; f.totalDelta = -30; return f }(), kindOther},
		{"arp", func() testFrame { f := ok; f.etherType = 0x0806; return f }(), kindOther},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := c.f.build()
			k, start, end := classify(b, testServerIP, false, tcpPort, udpPort)
			if k != c.want {
				t.Fatalf("kind %d, want %d", k, c.want)
			}
			if k == kindDatagram && string(b[start:end]) != string(c.f.payload) {
				t.Fatalf("payload %q, want %q", b[start:end], c.f.payload)
			}
		})
	}
}

func TestReplyHeaders(t *testing.T) {
	const udpPort = 8081
	req := testFrame{src: testClientIP, dst: testServerIP, sport: 40000, dport: udpPort,
		srcMAC: [6]byte{2, 0, 0, 0, 0, 2}, dstMAC: [6]byte{2, 0, 0, 0, 0, 1}, payload: []byte("x")}.build()
	for _, n := range []int{0, 1, 2, 7, 8, 9, 100, 1471, 1472} {
		out := make([]byte, 2048)
		for i := range n {
			out[udpHeadersAt+i] = byte(i*7 + n)
		}
		fl := writeReplyHeaders(out, req, n)
		out = out[:fl]
		// The reply, seen from the client, is a valid datagram to its port.
		k, start, end := classify(out, testClientIP, false, 0, 40000)
		if k != kindDatagram || end-start != n || start != udpHeadersAt {
			t.Fatalf("n=%d: reply classified %d [%d:%d]", n, k, start, end)
		}
		if [6]byte(out[ethDst:ethDst+6]) != [6]byte{2, 0, 0, 0, 0, 2} || [6]byte(out[ethSrc:ethSrc+6]) != [6]byte{2, 0, 0, 0, 0, 1} {
			t.Fatalf("n=%d: MACs not swapped: % x", n, out[:12])
		}
		if binary.BigEndian.Uint16(out[ethLen+ipv4Len+udpSrcPort:]) != udpPort {
			t.Fatalf("n=%d: source port %d", n, binary.BigEndian.Uint16(out[ethLen+ipv4Len:]))
		}
		if [4]byte(out[ethLen+ipSrc:ethLen+ipSrc+4]) != testServerIP {
			t.Fatalf("n=%d: source address % x", n, out[ethLen+ipSrc:ethLen+ipSrc+4])
		}
	}
}
