package netstack

import (
	"testing"
	"time"

	"gvisor.dev/gvisor/pkg/buffer"
	"gvisor.dev/gvisor/pkg/tcpip"
	"gvisor.dev/gvisor/pkg/tcpip/header"
	"gvisor.dev/gvisor/pkg/tcpip/stack"
)

// TestWritePacketsAllocatesNothing: sending a packet costs the link no
// allocation (it walks gVisor's views in place; AsSlices allocated a slice
// of them per frame, two per request).
func TestWritePacketsAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	for _, delay := range []time.Duration{-1, DefaultACKDelay} {
		e := newEndpoint(discardDev{}, serverAddr, 16, delay)
		e.neigh.learn(clientAddr.As4(), [6]byte(clientMAC))
		pkt := stack.NewPacketBuffer(stack.PacketBufferOptions{
			ReserveHeaderBytes: header.EthernetMinimumSize + header.IPv4MinimumSize + header.TCPMinimumSize,
			Payload:            buffer.MakeWithData(make([]byte, 100)),
		})
		pkt.TransportHeader().Push(header.TCPMinimumSize)
		pkt.NetworkHeader().Push(header.IPv4MinimumSize)
		pkt.NetworkProtocolNumber = header.IPv4ProtocolNumber
		e.AddHeader(pkt)
		pkt.EgressRoute.RemoteAddress = tcpip.AddrFrom4(clientAddr.As4())
		var l stack.PacketBufferList
		l.PushBack(pkt)
		if n, err := e.WritePackets(l); n != 1 || err != nil {
			t.Fatalf("WritePackets = %d, %v", n, err)
		}
		if a := testing.AllocsPerRun(100, func() { e.WritePackets(l) }); a != 0 {
			t.Errorf("ACK delay %v: %.1f allocations per packet, want 0", delay, a)
		}
		pkt.DecRef()
		e.detach()
	}
}
