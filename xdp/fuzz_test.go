package xdp

import (
	"testing"
)

// FuzzClassify feeds arbitrary frames to the RX loop's header checks:
// they never panic, a datagram's payload lies inside the frame, and the
// reply built for an accepted datagram is itself a valid datagram back to
// the sender's port.
func FuzzClassify(f *testing.F) {
	ok := testFrame{src: testClientIP, dst: testServerIP, sport: 40000, dport: testUDPPort, payload: []byte("GET / HTTP/1.1\r\n\r\n")}
	f.Add(ok.build())
	tcp := ok
	tcp.proto, tcp.dport = protoTCP, testTCPPort
	f.Add(tcp.build())
	f.Add(ok.build()[:ethLen+ipv4Len+3])
	f.Fuzz(func(t *testing.T, frame []byte) {
		k, start, end := classify(frame, testServerIP, false, testTCPPort, testUDPPort)
		if k != kindDatagram {
			return
		}
		if start != udpHeadersAt || end < start || end > len(frame) {
			t.Fatalf("payload [%d:%d] of a %d-byte frame", start, end, len(frame))
		}
		out := make([]byte, udpHeadersAt+end-start)
		copy(out[udpHeadersAt:], frame[start:end])
		n := writeReplyHeaders(out, frame, end-start)
		sport := uint16(frame[ethLen+ipv4Len])<<8 | uint16(frame[ethLen+ipv4Len+1])
		src := [4]byte(frame[ethLen+ipSrc : ethLen+ipSrc+4])
		rk, rs, re := classify(out[:n], src, false, 0, sport)
		if sport == 0 {
			return // port 0 turns the rule off in classify
		}
		if rk != kindDatagram || string(out[rs:re]) != string(frame[start:end]) {
			t.Fatalf("reply classified %d [%d:%d]", rk, rs, re)
		}
	})
}
