package netstack

import (
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"gvisor.dev/gvisor/pkg/buffer"
	"gvisor.dev/gvisor/pkg/tcpip"
	"gvisor.dev/gvisor/pkg/tcpip/header"
	"gvisor.dev/gvisor/pkg/tcpip/stack"
)

// endpoint is the project's gVisor link endpoint: Ethernet frames in from
// Stack.Deliver, frames out through Device.Transmit. It does the Ethernet
// framing itself (gVisor's ethernet endpoint would need an inner endpoint
// and ARP) and resolves next hops from the neighbour table it learns.
type endpoint struct {
	dev   Device
	mac   tcpip.LinkAddress
	addr  [4]byte // the served IPv4 address, as in the IP header
	neigh *neighbors
	acks  *ackHolder // nil: every ACK goes out at once

	mu         sync.RWMutex
	dispatcher stack.NetworkDispatcher // nil when detached
	mtu        uint32
	onClose    func()

	// frames holds transmit scratch buffers of MTU+EthernetMinimumSize
	// bytes: gVisor hands a packet over as a list of views, a Device
	// wants one contiguous frame, and Transmit copies it.
	frames sync.Pool

	stats linkStats
}

var _ stack.LinkEndpoint = (*endpoint)(nil)

// linkStats are the endpoint's own counters; gVisor's (checksum errors,
// segments) are in stack.Stats.
type linkStats struct {
	rxFrames, rxDropped       atomic.Uint64
	txFrames, txNoNeighbor    atomic.Uint64
	txErrors, txTooBig        atomic.Uint64
	txACKsMerged              atomic.Uint64
	txACKsDelayed             atomic.Uint64
	rxBadIPHeader, rxNotForUs atomic.Uint64
}

// newEndpoint builds the link; ackDelay > 0 holds pure ACKs (ackHolder).
func newEndpoint(dev Device, addr netip.Addr, maxNeighbors int, ackDelay time.Duration) *endpoint {
	e := &endpoint{
		dev:   dev,
		mac:   tcpip.LinkAddress(dev.MAC()),
		addr:  addr.As4(),
		neigh: newNeighbors(maxNeighbors),
		mtu:   uint32(dev.MTU()),
	}
	frameLen := dev.MTU() + header.EthernetMinimumSize
	e.frames.New = func() any { b := make([]byte, frameLen); return &b }
	if ackDelay > 0 {
		e.acks = newACKHolder(e, ackDelay, dev.MTU()-header.IPv4MinimumSize-header.TCPMinimumSize)
	}
	return e
}

// Offsets into a frame of an untagged Ethernet II header followed by an
// IPv4 header (RFC 791 §3.1).
const (
	ethSrc     = 6
	ethType    = 12
	ipStart    = header.EthernetMinimumSize
	ipSrcOff   = ipStart + 12
	ipDstOff   = ipStart + 16
	minIPv4Hdr = header.IPv4MinimumSize
)

// deliver parses one received frame's Ethernet header, learns the sender's
// MAC and hands the IPv4 packet to gVisor, which verifies the IP and TCP
// checksums (the endpoint claims no RX checksum offload).
func (e *endpoint) deliver(frame []byte) {
	e.stats.rxFrames.Add(1)
	if len(frame) < ipStart+minIPv4Hdr ||
		header.Ethernet(frame).Type() != header.IPv4ProtocolNumber {
		e.stats.rxDropped.Add(1)
		return
	}
	// Unicast to our MAC only: a promiscuous NIC or a misdirected frame
	// must not open connections (the XDP program matches IP and port,
	// not the destination MAC).
	if tcpip.LinkAddress(frame[:header.EthernetAddressSize]) != e.mac {
		e.stats.rxNotForUs.Add(1)
		return
	}
	ip := header.IPv4(frame[ipStart:])
	// Learn only from a sound header addressed to us: a corrupted frame
	// must not overwrite a neighbour. gVisor checks the header again,
	// with the rest of the packet.
	if !ip.IsValid(len(frame)-ipStart) || !ip.IsChecksumValid() ||
		[4]byte(frame[ipDstOff:ipDstOff+4]) != e.addr {
		e.stats.rxBadIPHeader.Add(1)
		return
	}
	src := [4]byte(frame[ipSrcOff : ipSrcOff+4])
	if srcMAC := frame[ethSrc : ethSrc+header.EthernetAddressSize]; srcMAC[0]&1 == 0 {
		e.neigh.learn(src, [6]byte(srcMAC))
	}

	if e.acks != nil {
		if k, n, ok := rxSegment(frame); ok && n > 0 {
			e.acks.received(k, n)
		}
	}

	e.mu.RLock()
	d := e.dispatcher
	e.mu.RUnlock()
	if d == nil {
		e.stats.rxDropped.Add(1)
		return
	}
	// The frame is only valid during this call and gVisor queues
	// segments, so it gets a copy (into a pooled view).
	pkt := stack.NewPacketBuffer(stack.PacketBufferOptions{Payload: buffer.MakeWithData(frame)})
	defer pkt.DecRef()
	if _, ok := pkt.LinkHeader().Consume(header.EthernetMinimumSize); !ok {
		e.stats.rxDropped.Add(1)
		return
	}
	pkt.PktType = tcpip.PacketHost
	d.DeliverNetworkPacket(header.IPv4ProtocolNumber, pkt)
}

// WritePackets sends each packet as one frame. The Ethernet header was
// pushed by AddHeader; the destination MAC is filled in here from the
// neighbour table.
func (e *endpoint) WritePackets(pkts stack.PacketBufferList) (int, tcpip.Error) {
	bp := e.frames.Get().(*[]byte)
	defer e.frames.Put(bp)
	buf := *bp
	n := 0
	var err tcpip.Error
	for _, pkt := range pkts.AsSlice() {
		if err = e.writeOne(buf, pkt); err != nil {
			break
		}
		n++
	}
	return n, err
}

func (e *endpoint) writeOne(buf []byte, pkt *stack.PacketBuffer) tcpip.Error {
	if pkt.Size() > len(buf) {
		e.stats.txTooBig.Add(1)
		return &tcpip.ErrMessageTooLong{}
	}
	next := pkt.EgressRoute.NextHop
	if next.Len() == 0 {
		next = pkt.EgressRoute.RemoteAddress
	}
	if next.Len() != 4 {
		e.stats.txNoNeighbor.Add(1)
		return &tcpip.ErrHostUnreachable{}
	}
	dst, ok := e.neigh.lookup(next.As4())
	if !ok {
		// Nothing was ever received from that peer: a server only
		// answers, so this is a reply to a forgotten neighbour.
		e.stats.txNoNeighbor.Add(1)
		return &tcpip.ErrHostUnreachable{}
	}
	// The packet's views, walked in place: AsSlices would allocate a
	// slice of them for every frame (two allocations per request).
	views, skip := pkt.AsViewList()
	off := 0
	for v := views.Front(); v != nil; v = v.Next() {
		b := v.AsSlice()
		if skip >= len(b) {
			skip -= len(b)
			continue
		}
		off += copy(buf[off:], b[skip:])
		skip = 0
	}
	frame := buf[:off]
	copy(frame[:header.EthernetAddressSize], dst[:])
	var err error
	if e.acks != nil {
		err = e.acks.send(frame)
	} else {
		err = e.transmit(frame)
	}
	if err != nil {
		return &tcpip.ErrNoBufferSpace{}
	}
	return nil
}

// transmit hands one finished frame to the device.
func (e *endpoint) transmit(frame []byte) error {
	if err := e.dev.Transmit(frame); err != nil {
		e.stats.txErrors.Add(1)
		return err
	}
	e.stats.txFrames.Add(1)
	return nil
}

// AddHeader pushes the Ethernet header with the source MAC; WritePackets
// writes the destination, which depends on the neighbour table at send time.
func (e *endpoint) AddHeader(pkt *stack.PacketBuffer) {
	eth := header.Ethernet(pkt.LinkHeader().Push(header.EthernetMinimumSize))
	eth.Encode(&header.EthernetFields{SrcAddr: e.mac, Type: pkt.NetworkProtocolNumber})
}

// ParseHeader consumes the Ethernet header of a packet gVisor injects with
// its link header in the payload.
func (e *endpoint) ParseHeader(pkt *stack.PacketBuffer) bool {
	_, ok := pkt.LinkHeader().Consume(header.EthernetMinimumSize)
	return ok
}

func (e *endpoint) MTU() uint32 {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.mtu
}

func (e *endpoint) SetMTU(mtu uint32) {
	e.mu.Lock()
	e.mtu = min(mtu, uint32(e.dev.MTU())) // never above what the frames hold
	e.mu.Unlock()
}

func (e *endpoint) MaxHeaderLength() uint16 { return header.EthernetMinimumSize }

func (e *endpoint) LinkAddress() tcpip.LinkAddress { return e.mac }

// SetLinkAddress is ignored: the MAC is the device's.
func (e *endpoint) SetLinkAddress(tcpip.LinkAddress) {}

// Capabilities claims nothing: no checksum offload either way (gVisor
// computes and verifies every checksum in software) and no link address
// resolution (the neighbour table replaces ARP).
func (e *endpoint) Capabilities() stack.LinkEndpointCapabilities { return stack.CapabilityNone }

func (e *endpoint) Attach(d stack.NetworkDispatcher) {
	e.mu.Lock()
	e.dispatcher = d
	e.mu.Unlock()
}

func (e *endpoint) IsAttached() bool {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.dispatcher != nil
}

func (e *endpoint) detach() {
	e.Attach(nil)
	if e.acks != nil {
		e.acks.close()
	}
}

// Wait returns at once: the endpoint has no goroutines (the RX loop
// belongs to the caller of Deliver).
func (e *endpoint) Wait() {}

func (e *endpoint) ARPHardwareType() header.ARPHardwareType { return header.ARPHardwareEther }

func (e *endpoint) Close() {
	e.mu.Lock()
	f := e.onClose
	e.onClose = nil
	e.dispatcher = nil
	e.mu.Unlock()
	if f != nil {
		f()
	}
}

func (e *endpoint) SetOnCloseAction(f func()) {
	e.mu.Lock()
	e.onClose = f
	e.mu.Unlock()
}
