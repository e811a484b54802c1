package xdp

import (
	"bytes"
	"net"
	"testing"
)

// FuzzQUICFrames feeds arbitrary frames through the PacketConn's receive
// side as the RX loop would: classify for the UDP port, then learn the
// sender. It never panics; a frame for another port is refused; the
// sender's address is the frame's; and a datagram written back from the
// learnt endpoints is a valid datagram to the sender's address and port
// carrying the same payload.
func FuzzQUICFrames(f *testing.F) {
	ok := testFrame{src: testClientIP, dst: testServerIP, sport: 40000, dport: testUDPPort, payload: []byte("\xc0\x00\x00\x00\x01quic")}
	f.Add(ok.build(), uint16(testUDPPort))
	f.Add(ok.build(), uint16(testUDPPort+1))
	f.Add(ok.build()[:ethLen+ipv4Len+3], uint16(testUDPPort))
	f.Add([]byte{}, uint16(0))
	f.Fuzz(func(t *testing.T, frame []byte, port uint16) {
		k, start, end := classify(frame, testServerIP, false, 0, port)
		if k != kindDatagram {
			return
		}
		if dport := uint16(frame[ethLen+ipv4Len+udpDstPort])<<8 | uint16(frame[ethLen+ipv4Len+udpDstPort+1]); dport != port {
			t.Fatalf("datagram to port %d accepted for port %d", dport, port)
		}
		c := &packetConn{peers: make(map[udpAddr]*peer)}
		p := c.learn(nil, frame)
		src := frame[ethLen+ipSrc : ethLen+ipSrc+4]
		sport := int(frame[ethLen+ipv4Len])<<8 | int(frame[ethLen+ipv4Len+1])
		if want := (&net.UDPAddr{IP: net.IP(src), Port: sport}).String(); p.addr.String() != want {
			t.Fatalf("sender %s, want %s", p.addr, want)
		}
		if again := c.learn(nil, frame); again != p {
			t.Fatal("the same sender learnt twice")
		}
		payload := frame[start:end]
		out := make([]byte, udpHeadersAt+len(payload))
		copy(out[udpHeadersAt:], payload)
		n := writeHeaders(out, p.e, len(payload))
		if sport == 0 {
			return // port 0 turns the rule off in classify
		}
		rk, rs, re := classify(out[:n], [4]byte(src), false, 0, uint16(sport))
		if rk != kindDatagram || !bytes.Equal(out[rs:re], payload) {
			t.Fatalf("written datagram classified %d [%d:%d]", rk, rs, re)
		}
	})
}
