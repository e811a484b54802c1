package netstack

import (
	"encoding/binary"
	"sync"
	"sync/atomic"
	"time"

	"gvisor.dev/gvisor/pkg/tcpip/header"
)

// DefaultACKDelay is how long the link holds a pure ACK (Config.ACKDelay).
// A held ACK waits between one and two of these: far below the 40 ms of
// Linux's delayed ACK and the 500 ms RFC 1122 §4.2.3.2 allows, and long
// enough for a server's response to carry the acknowledgement instead.
const DefaultACKDelay = time.Millisecond

// ackHolder is delayed ACK done at the link, because gVisor has none: it
// acknowledges every batch of segments as soon as it has processed them,
// before the application can answer, so a request costs two frames out
// (the ACK, then the response) where kernel TCP sends one. The profile of
// bench/netstack showed the ACK's transmit costing as much as the
// response's (decision 0047).
//
// A pure ACK (flags exactly ACK, no payload) is held, one per connection.
// The next segment of that connection decides its fate:
//   - a segment carrying ACK (the response, a FIN) supersedes it, since
//     gVisor's acknowledgement number and window only move forward, and
//     the held frame is dropped;
//   - another pure ACK sends both, in order, so duplicate ACKs (fast
//     retransmit) and window updates of a busy receiver are never merged;
//   - a segment without ACK (a bare RST) sends the held ACK first.
//
// Otherwise a timer sends it after one to two delays.
//
// An ACK for bulk data is never held: when the segments received on the
// connection since it last sent add up to a full segment (an upload, a
// large request), the ACK goes out at once, as RFC 5681 §4.2 asks of a
// delayed ACK (at least every second full-sized segment). Holding it
// would stall a sender that waits for it to send the next flight. Nor is
// an ACK held whose connection the table below does not know (it never
// sent data, or another connection took its slot): when in doubt, send.
type ackHolder struct {
	e     *endpoint
	delay time.Duration
	bulk  uint32 // received bytes that make the next ACK immediate
	rx    []rxSlot

	count atomic.Int32 // len(held), read without the lock on every send

	mu     sync.Mutex
	held   map[flowKey]heldACK
	epoch  uint64 // timer periods so far
	timer  *time.Timer
	armed  bool
	closed bool
}

// flowKey names a connection from the server's side.
type flowKey struct {
	remote       [4]byte
	rport, lport uint16
}

// rxSlot counts the payload bytes received on one connection since it
// last sent a segment. The slots are a direct-mapped table written by the
// RX goroutines and read by senders without a lock. A collision costs a
// merge (the ACK of a connection that lost its slot goes out at once);
// only two RX queues writing one slot at the same instant can leave a
// count with the wrong key, and then one ACK waits its delay.
type rxSlot struct {
	key     atomic.Uint64 // flowKey.pack(); 0 is free
	pending atomic.Uint32
}

// rxSlotBits sizes the table: 4096 slots, 64 KiB.
const (
	rxSlotBits = 12
	rxSlots    = 1 << rxSlotBits
)

func (k flowKey) pack() uint64 {
	return uint64(binary.BigEndian.Uint32(k.remote[:]))<<32 | uint64(k.rport)<<16 | uint64(k.lport)
}

func (h *ackHolder) slot(key uint64) *rxSlot {
	return &h.rx[(key*0x9e3779b97f4a7c15)>>(64-rxSlotBits)]
}

// received counts a received segment's payload (called before gVisor
// sees the segment, so an ACK of it finds it counted).
func (h *ackHolder) received(k flowKey, payload int) {
	key := k.pack()
	s := h.slot(key)
	if s.key.Load() != key {
		s.key.Store(key)
		s.pending.Store(uint32(payload))
		return
	}
	s.pending.Add(uint32(payload))
}

type heldACK struct {
	buf   *[]byte // from endpoint.frames
	n     int
	epoch uint64
}

func newACKHolder(e *endpoint, delay time.Duration, mss int) *ackHolder {
	h := &ackHolder{e: e, delay: delay, bulk: uint32(mss), rx: make([]rxSlot, rxSlots), held: make(map[flowKey]heldACK)}
	h.timer = time.AfterFunc(time.Hour, h.expire)
	h.timer.Stop()
	return h
}

// tcpSegment reads the flow and kind of a frame the stack built: an
// untagged IPv4 header, then TCP. ok is false for anything else.
func tcpSegment(frame []byte) (k flowKey, pureACK, hasACK, ok bool) {
	if len(frame) < ipStart+minIPv4Hdr || binary.BigEndian.Uint16(frame[ethType:]) != uint16(header.IPv4ProtocolNumber) {
		return k, false, false, false
	}
	ip := frame[ipStart:]
	ihl := int(ip[0]&0x0f) * 4
	total := int(binary.BigEndian.Uint16(ip[2:]))
	if ip[9] != uint8(header.TCPProtocolNumber) || ihl < minIPv4Hdr || total > len(ip) || total < ihl+header.TCPMinimumSize {
		return k, false, false, false
	}
	tcp := ip[ihl:total]
	doff := int(tcp[12]>>4) * 4
	flags := tcp[13]
	k = flowKey{remote: [4]byte(ip[16:20]), lport: binary.BigEndian.Uint16(tcp[0:]), rport: binary.BigEndian.Uint16(tcp[2:])}
	hasACK = flags&uint8(header.TCPFlagAck) != 0
	pureACK = flags == uint8(header.TCPFlagAck) && doff == len(tcp)
	return k, pureACK, hasACK, true
}

// rxSegment reads the flow and payload length of a received frame whose
// IPv4 header deliver has checked; ok is false for anything but TCP.
func rxSegment(frame []byte) (k flowKey, payload int, ok bool) {
	ip := frame[ipStart:]
	ihl := int(ip[0]&0x0f) * 4
	total := int(binary.BigEndian.Uint16(ip[2:]))
	if ip[9] != uint8(header.TCPProtocolNumber) || total > len(ip) || total < ihl+header.TCPMinimumSize {
		return k, 0, false
	}
	tcp := ip[ihl:total]
	doff := int(tcp[12]>>4) * 4
	if doff < header.TCPMinimumSize || doff > len(tcp) {
		return k, 0, false
	}
	k = flowKey{remote: [4]byte(ip[12:16]), rport: binary.BigEndian.Uint16(tcp[0:]), lport: binary.BigEndian.Uint16(tcp[2:])}
	return k, len(tcp) - doff, true
}

// send transmits frame now, or holds it, or drops a held ACK it
// supersedes. It is called for every frame the stack sends; the error is
// frame's own transmit error.
func (h *ackHolder) send(frame []byte) error {
	k, pure, hasACK, ok := tcpSegment(frame)
	if !ok {
		return h.e.transmit(frame)
	}
	small := false // known, and less than a full segment since it last sent
	if key := k.pack(); h.slot(key).key.Load() == key {
		small = h.slot(key).pending.Swap(0) < h.bulk
	}
	if !pure && h.count.Load() == 0 {
		return h.e.transmit(frame)
	}
	h.mu.Lock()
	old, had := h.held[k]
	if had {
		delete(h.held, k)
		h.count.Add(-1)
	}
	if pure && !had && small && !h.closed {
		buf := h.e.frames.Get().(*[]byte)
		h.held[k] = heldACK{buf: buf, n: copy(*buf, frame), epoch: h.epoch}
		h.count.Add(1)
		if !h.armed {
			h.armed = true
			h.timer.Reset(h.delay)
		}
		h.mu.Unlock()
		return nil
	}
	h.mu.Unlock()
	if had {
		if hasACK && !pure {
			h.e.stats.txACKsMerged.Add(1)
		} else {
			h.e.transmit((*old.buf)[:old.n])
		}
		h.e.frames.Put(old.buf)
	}
	return h.e.transmit(frame)
}

// expire sends the ACKs held for a whole timer period and re-arms the
// timer while any are left.
func (h *ackHolder) expire() {
	var due []heldACK
	h.mu.Lock()
	for k, a := range h.held {
		if a.epoch < h.epoch {
			due = append(due, a)
			delete(h.held, k)
		}
	}
	h.count.Add(-int32(len(due)))
	h.epoch++
	h.armed = len(h.held) > 0 && !h.closed
	if h.armed {
		h.timer.Reset(h.delay)
	}
	h.mu.Unlock()
	for _, a := range due {
		h.e.stats.txACKsDelayed.Add(1)
		h.e.transmit((*a.buf)[:a.n])
		h.e.frames.Put(a.buf)
	}
}

// close drops what is held: the stack is resetting its connections.
func (h *ackHolder) close() {
	h.mu.Lock()
	h.closed = true
	h.timer.Stop()
	clear(h.held)
	h.count.Store(0)
	h.mu.Unlock()
}
