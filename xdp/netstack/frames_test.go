package netstack

import (
	"bytes"
	"errors"
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"

	"gvisor.dev/gvisor/pkg/tcpip"
	"gvisor.dev/gvisor/pkg/tcpip/checksum"
	"gvisor.dev/gvisor/pkg/tcpip/header"
)

// recDev records the frames a stack transmits.
type recDev struct {
	mu     sync.Mutex
	frames [][]byte
}

func (d *recDev) MAC() net.HardwareAddr { return serverMAC }
func (d *recDev) MTU() int              { return testMTU }
func (d *recDev) Transmit(f []byte) error {
	d.mu.Lock()
	d.frames = append(d.frames, append([]byte(nil), f...))
	d.mu.Unlock()
	return nil
}

func (d *recDev) count() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.frames)
}

// await waits (bounded) until n frames were sent and returns them.
func (d *recDev) await(t *testing.T, n int) [][]byte {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	for d.count() < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d frames sent, want %d", d.count(), n)
		}
		time.Sleep(time.Millisecond)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([][]byte(nil), d.frames...)
}

// settle gives gVisor's goroutines time to act on delivered frames, for
// tests that check that nothing is sent.
func settle() { time.Sleep(50 * time.Millisecond) }

func newRecStack(t *testing.T) (*Stack, *recDev) {
	t.Helper()
	d := &recDev{}
	s, err := New(Config{Address: serverAddr, Port: testPort}, d)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, d
}

// synOpts offers MSS 1460, window scale 7 and SACK, as Linux does, padded
// to a multiple of 4 bytes (the data offset counts 32-bit words).
var synOpts = []byte{
	header.TCPOptionMSS, 4, 0x05, 0xb4,
	header.TCPOptionNOP, header.TCPOptionNOP, header.TCPOptionSACKPermitted, 2,
	header.TCPOptionNOP, header.TCPOptionWS, 3, 7,
}

type synSpec struct {
	srcMAC  net.HardwareAddr
	src     netip.Addr
	dst     netip.Addr
	sport   uint16
	dport   uint16
	badTCP  bool // corrupt the TCP checksum
	badIP   bool // corrupt the IPv4 header checksum
	padding int  // trailing bytes after the IP packet (Ethernet padding)
}

// synFrame builds an Ethernet+IPv4+TCP SYN to the server.
func synFrame(s synSpec) []byte {
	if s.srcMAC == nil {
		s.srcMAC = clientMAC
	}
	if !s.dst.IsValid() {
		s.dst = serverAddr
	}
	if s.dport == 0 {
		s.dport = testPort
	}
	tcpLen := header.TCPMinimumSize + len(synOpts)
	ipLen := header.IPv4MinimumSize + tcpLen
	f := make([]byte, header.EthernetMinimumSize+ipLen+s.padding)
	header.Ethernet(f).Encode(&header.EthernetFields{
		SrcAddr: tcpip.LinkAddress(s.srcMAC), DstAddr: tcpip.LinkAddress(serverMAC), Type: header.IPv4ProtocolNumber,
	})
	ip := header.IPv4(f[header.EthernetMinimumSize:])
	srcA, dstA := tcpip.AddrFrom4(s.src.As4()), tcpip.AddrFrom4(s.dst.As4())
	ip.Encode(&header.IPv4Fields{
		TotalLength: uint16(ipLen), TTL: 64, Protocol: uint8(header.TCPProtocolNumber), SrcAddr: srcA, DstAddr: dstA,
	})
	ip.SetChecksum(^ip.CalculateChecksum())
	if s.badIP {
		ip.SetChecksum(ip.Checksum() ^ 0x0100)
	}
	tcp := header.TCP(ip[header.IPv4MinimumSize:ipLen])
	tcp.Encode(&header.TCPFields{
		SrcPort: s.sport, DstPort: s.dport, SeqNum: 1000, DataOffset: uint8(tcpLen),
		Flags: header.TCPFlagSyn, WindowSize: 64240,
	})
	copy(tcp[header.TCPMinimumSize:], synOpts)
	xsum := header.PseudoHeaderChecksum(header.TCPProtocolNumber, srcA, dstA, uint16(tcpLen))
	tcp.SetChecksum(^checksum.Checksum(tcp, xsum))
	if s.badTCP {
		tcp.SetChecksum(tcp.Checksum() ^ 0x0001)
	}
	return f
}

// synAck checks that f is a well-formed SYN-ACK from the server to
// (mac, addr, port) and returns its TCP header.
func synAck(t *testing.T, f []byte, mac net.HardwareAddr, addr netip.Addr, port uint16) header.TCP {
	t.Helper()
	eth := header.Ethernet(f)
	if eth.DestinationAddress() != tcpip.LinkAddress(mac) || eth.SourceAddress() != tcpip.LinkAddress(serverMAC) {
		t.Fatalf("frame %v -> %v, want %v -> %v", eth.SourceAddress(), eth.DestinationAddress(), serverMAC, mac)
	}
	ip := header.IPv4(f[header.EthernetMinimumSize:])
	if !ip.IsValid(len(ip)) || !ip.IsChecksumValid() {
		t.Fatal("invalid IPv4 header")
	}
	if ip.DestinationAddress() != tcpip.AddrFrom4(addr.As4()) {
		t.Fatalf("sent to %v, want %v", ip.DestinationAddress(), addr)
	}
	tcp := header.TCP(ip.Payload())
	if tcp.Flags() != header.TCPFlagSyn|header.TCPFlagAck || tcp.DestinationPort() != port {
		t.Fatalf("flags %v to port %d, want SYN-ACK to %d", tcp.Flags(), tcp.DestinationPort(), port)
	}
	xsum := header.PseudoHeaderChecksum(header.TCPProtocolNumber, ip.SourceAddress(), ip.DestinationAddress(), uint16(len(tcp)))
	if checksum.Checksum(tcp, xsum) != 0xffff {
		t.Error("SYN-ACK has a bad TCP checksum: the stack must compute it (no TX offload)")
	}
	return tcp
}

// A segment with a bad TCP checksum is dropped (the NIC verified nothing,
// so gVisor must); the same SYN with a good one is answered, to the MAC it
// came from, with the options a server should offer.
func TestChecksumAndSynAck(t *testing.T) {
	s, d := newRecStack(t)
	s.Deliver(synFrame(synSpec{src: clientAddr, sport: 40000, badTCP: true}))
	settle()
	if n := d.count(); n != 0 {
		t.Fatalf("%d frames sent in answer to a SYN with a bad checksum", n)
	}
	if got := s.Stats().TCPChecksumErrors; got != 1 {
		t.Errorf("TCPChecksumErrors = %d, want 1", got)
	}

	s.Deliver(synFrame(synSpec{src: clientAddr, sport: 40000}))
	tcp := synAck(t, d.await(t, 1)[0], clientMAC, clientAddr, 40000)
	o := header.ParseSynOptions(tcp.Options(), true)
	if !o.SACKPermitted {
		t.Error("SYN-ACK does not permit SACK")
	}
	if o.WS < 1 {
		t.Errorf("SYN-ACK window scale %d, want scaling on (1 MiB buffers)", o.WS)
	}
	if want := testMTU - header.IPv4MinimumSize - header.TCPMinimumSize; int(o.MSS) != want {
		t.Errorf("SYN-ACK MSS %d, want %d", o.MSS, want)
	}
	if st := s.Stats(); st.Neighbors != 1 || st.TxFrames != 1 {
		t.Errorf("stats %+v, want 1 neighbour and 1 frame sent", st)
	}
}

// Each peer is answered at the MAC its frames came from, and a padded
// minimum-size Ethernet frame is accepted.
func TestNeighboursLearntPerPeer(t *testing.T) {
	s, d := newRecStack(t)
	peers := []struct {
		mac  net.HardwareAddr
		addr netip.Addr
	}{
		{net.HardwareAddr{0x02, 0, 0, 0, 1, 1}, netip.MustParseAddr("198.18.1.1")},
		{net.HardwareAddr{0x02, 0, 0, 0, 1, 2}, netip.MustParseAddr("198.19.255.7")},
	}
	for i, p := range peers {
		s.Deliver(synFrame(synSpec{srcMAC: p.mac, src: p.addr, sport: uint16(41000 + i), padding: 6}))
		synAck(t, d.await(t, i+1)[i], p.mac, p.addr, uint16(41000+i))
	}
}

// Frames the stack must not accept are dropped and counted, never
// answered, and never teach a neighbour.
func TestDeliverDropsBadFrames(t *testing.T) {
	s, d := newRecStack(t)
	good := synFrame(synSpec{src: clientAddr, sport: 42000})
	mutate := func(f func(b []byte) []byte) []byte { return f(bytes.Clone(good)) }
	cases := []struct {
		name  string
		frame []byte
	}{
		{"empty", nil},
		{"short ethernet", good[:13]},
		{"ethernet only", good[:header.EthernetMinimumSize]},
		{"truncated IP header", good[:header.EthernetMinimumSize+10]},
		{"truncated IP packet", good[:len(good)-4]},
		{"ARP", mutate(func(b []byte) []byte { b[12], b[13] = 0x08, 0x06; return b })},
		{"IPv6 ethertype", mutate(func(b []byte) []byte { b[12], b[13] = 0x86, 0xdd; return b })},
		{"other MAC", mutate(func(b []byte) []byte { b[5] ^= 1; return b })},
		{"broadcast MAC", mutate(func(b []byte) []byte { copy(b, bytes.Repeat([]byte{0xff}, 6)); return b })},
		{"version 6 in IPv4", mutate(func(b []byte) []byte { b[ipStart] = 0x65; return b })},
		{"IHL 4", mutate(func(b []byte) []byte { b[ipStart] = 0x44; return b })},
		{"bad IP checksum", synFrame(synSpec{src: clientAddr, sport: 42000, badIP: true})},
		{"other address", synFrame(synSpec{src: clientAddr, dst: netip.MustParseAddr("198.18.0.9"), sport: 42000})},
	}
	for _, c := range cases {
		s.Deliver(c.frame)
	}
	// A SYN to another port passes the link checks; gVisor answers it
	// with a RST, which is fine: the XDP program never steers one.
	settle()
	if n := d.count(); n != 0 {
		t.Errorf("%d frames sent in answer to bad frames", n)
	}
	st := s.Stats()
	if st.Neighbors != 0 {
		t.Errorf("learnt %d neighbours from bad frames", st.Neighbors)
	}
	if dropped := st.RxDropped + st.RxNotForUs + st.RxBadIPHeader; st.RxFrames != uint64(len(cases)) || dropped != uint64(len(cases)) {
		t.Errorf("stats %+v: want all %d frames received and dropped", st, len(cases))
	}
}

func FuzzDeliver(f *testing.F) {
	f.Add(synFrame(synSpec{src: clientAddr, sport: 43000}))
	f.Add(synFrame(synSpec{src: clientAddr, sport: 43000, badTCP: true}))
	// A discarding device: a long run must not accumulate the SYN-ACKs
	// and RSTs the inputs provoke.
	s, err := New(Config{Address: serverAddr, Port: testPort}, discardDev{})
	if err != nil {
		f.Fatal(err)
	}
	defer s.Close()
	f.Fuzz(func(t *testing.T, frame []byte) {
		s.Deliver(frame) // must not panic, whatever the bytes
	})
}

type discardDev struct{}

func (discardDev) MAC() net.HardwareAddr { return serverMAC }
func (discardDev) MTU() int              { return testMTU }
func (discardDev) Transmit([]byte) error { return nil }

type badMACDev struct{ recDev }

func (*badMACDev) MAC() net.HardwareAddr { return net.HardwareAddr{0x01, 0, 0x5e, 0, 0, 1} }

type smallMTUDev struct{ recDev }

func (*smallMTUDev) MTU() int { return 500 }

func TestNewRejects(t *testing.T) {
	ok := Config{Address: serverAddr, Port: testPort}
	for _, c := range []struct {
		name string
		cfg  Config
		dev  Device
		want error
	}{
		{"no address", Config{Port: 80}, &recDev{}, ErrConfig},
		{"IPv6", Config{Address: netip.MustParseAddr("2001:db8::1"), Port: 80}, &recDev{}, ErrConfig},
		{"multicast", Config{Address: netip.MustParseAddr("224.0.0.1"), Port: 80}, &recDev{}, ErrConfig},
		{"port 0", Config{Address: serverAddr}, &recDev{}, ErrConfig},
		{"negative backlog", Config{Address: serverAddr, Port: 80, Backlog: -1}, &recDev{}, ErrConfig},
		{"nil device", ok, nil, ErrDevice},
		{"multicast MAC", ok, &badMACDev{}, ErrDevice},
		{"small MTU", ok, &smallMTUDev{}, ErrDevice},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := New(c.cfg, c.dev)
			if !errors.Is(err, c.want) {
				t.Errorf("New: %v, want %v", err, c.want)
			}
			if s != nil {
				s.Close()
			}
		})
	}
}

func TestNeighborsBounded(t *testing.T) {
	n := newNeighbors(4)
	for i := range 100 {
		n.learn([4]byte{198, 18, 0, byte(i)}, [6]byte{2, 0, 0, 0, 0, byte(i)})
	}
	if n.len() != 4 {
		t.Errorf("%d entries, want the bound 4", n.len())
	}
	if mac, ok := n.lookup([4]byte{198, 18, 0, 99}); !ok || mac[5] != 99 {
		t.Errorf("latest entry: %v %v", mac, ok)
	}
	n.learn([4]byte{198, 18, 0, 99}, [6]byte{2, 0, 0, 0, 0, 7}) // the peer moved
	if mac, _ := n.lookup([4]byte{198, 18, 0, 99}); mac[5] != 7 {
		t.Errorf("moved peer still at %v", mac)
	}
}
