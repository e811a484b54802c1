package xdp

import (
	"errors"
	"net"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// txBatch is how many frames WriteTo queues on a TX ring before it kicks
// the kernel itself rather than leave the kick to the flusher.
const txBatch = 32

// maxPeers bounds the table of senders WriteTo can answer (their MAC and
// the local address they wrote to). Spoofed sources could otherwise grow
// it without end. It is kept in two generations of maxPeers/2: when the
// newer fills, the older is dropped and the newer takes its place, and a
// sender found in the older moves to the newer. So a peer that sent
// anything within the last maxPeers/2 new senders is always known. (The
// table used to be emptied when full: a flood of forged sources then made
// every established connection's next WriteTo find no peer, which, when
// that was an error, quic-go took as fatal to the connection.)
const maxPeers = 1 << 16

// ErrNotUDP: WriteTo was given an address that is not an IPv4 UDP address.
var ErrNotUDP = errors.New("xdp: not an IPv4 UDP address")

// ErrPacketConn: the UDP port already has a PacketConn.
var ErrPacketConn = errors.New("xdp: the UDP port already has a PacketConn")

// rxPacket is a received datagram still in its UMEM frame.
type rxPacket struct {
	q    *queue
	base uint64
	data []byte
	from *net.UDPAddr
}

// peer is what WriteTo needs to reach an address datagrams came from.
type peer struct {
	addr *net.UDPAddr // handed to ReadFrom's callers, one per sender
	e    endpoints    // the headers of a datagram to it
	q    *queue       // the queue it arrived on: replies leave there
}

// packetConn is the net.PacketConn of the UDP port: the RX loops hand it
// datagrams in their frames, ReadFrom copies one out and returns frames
// to the fill ring a batch at a time, WriteTo builds a frame on a TX ring
// and kicks once per batch.
type packetConn struct {
	l     *Listener
	ch    chan rxPacket
	done  chan struct{}
	once  sync.Once
	local net.UDPAddr

	rmu   sync.Mutex // ReadFrom; back
	back  map[*queue][]uint64
	rwake chan struct{} // SetReadDeadline wakes a blocked ReadFrom
	rdl   atomic.Int64  // read deadline, UnixNano; 0: none
	wdl   atomic.Int64

	pmu   sync.RWMutex
	peers map[udpAddr]*peer // the newer generation (see maxPeers)
	older map[udpAddr]*peer

	kicks chan *queue // queues with frames the flusher is to kick
	flush sync.WaitGroup

	// noRoute counts datagrams WriteTo dropped for want of a peer's
	// MAC address (Listener.Stats' NoRoute; those dropped for want of a
	// free TX frame are in its TXFull).
	noRoute atomic.Uint64
}

var _ net.PacketConn = (*packetConn)(nil)

// PacketConn returns a net.PacketConn on the UDP port, for a protocol
// such as QUIC that runs its own state over datagrams. From then on the
// port's datagrams go to it, not to Datagrams. It can be opened once;
// closing it does not close the Listener. It returns ErrConfig when
// UDPPort is 0.
func (l *Listener) PacketConn() (net.PacketConn, error) {
	if l.udpPort == 0 {
		return nil, ErrConfig
	}
	c := &packetConn{
		l:     l,
		ch:    make(chan rxPacket, int(l.rxBytes)/l.cfg.FrameSize*len(l.queues)),
		done:  make(chan struct{}),
		local: net.UDPAddr{IP: net.IP(l.addr[:]), Port: int(l.udpPort)},
		back:  make(map[*queue][]uint64),
		rwake: make(chan struct{}, 1),
		peers: make(map[udpAddr]*peer),
		older: make(map[udpAddr]*peer),
		kicks: make(chan *queue, len(l.queues)),
	}
	if l.anyAddr {
		c.local.IP = net.IPv4zero
	}
	if !l.pconn.CompareAndSwap(nil, c) {
		return nil, ErrPacketConn
	}
	c.flush.Add(1)
	go c.flusher()
	return c, nil
}

// deliver queues a received datagram for ReadFrom (on the RX loop); false
// leaves the frame to the caller.
func (c *packetConn) deliver(q *queue, base uint64, f []byte, start, end int) bool {
	select {
	case <-c.done:
		return false
	default:
	}
	p := c.learn(q, f)
	c.l.inflight.Add(1)
	q.datagrams.Add(1)
	select {
	case c.ch <- rxPacket{q: q, base: base, data: f[start:end:end], from: p.addr}:
		return true
	default:
		q.datagrams.Add(^uint64(0))
		c.l.inflight.Done()
		return false
	}
}

// learn returns the peer that sent frame f, recording (or updating) its
// MAC and the local address it wrote to.
func (c *packetConn) learn(q *queue, f []byte) *peer {
	e := replyEndpoints(f)
	key := udpAddr{ip: e.dstIP, port: e.dport}
	c.pmu.RLock()
	p := c.peers[key]
	c.pmu.RUnlock()
	if p != nil && p.e == e && p.q == q {
		return p
	}
	c.pmu.Lock()
	defer c.pmu.Unlock()
	if p == nil {
		p = c.older[key]
	}
	if p == nil {
		p = &peer{addr: &net.UDPAddr{IP: net.IP(key.ip[:]), Port: int(key.port)}}
	} else {
		// ReadFrom's callers may hold the old one: never changed in place.
		p = &peer{addr: p.addr}
	}
	p.e, p.q = e, q
	if _, ok := c.peers[key]; !ok && len(c.peers) >= maxPeers/2 {
		// The newer generation is full: it becomes the older (reusing
		// the dropped one's map).
		clear(c.older)
		c.peers, c.older = c.older, c.peers
	}
	c.peers[key] = p
	return p
}

// lookup returns the peer of addr, or nil.
func (c *packetConn) lookup(addr udpAddr) *peer {
	c.pmu.RLock()
	defer c.pmu.RUnlock()
	if p := c.peers[addr]; p != nil {
		return p
	}
	return c.older[addr]
}

// ReadFrom implements net.PacketConn. It copies one datagram into b
// (truncating, as a UDP socket does). The frames of the datagrams it
// returned go back to the fill ring together, once the batch the RX loop
// delivered is consumed (or rxBatch of them piled up).
func (c *packetConn) ReadFrom(b []byte) (int, net.Addr, error) {
	c.rmu.Lock()
	defer c.rmu.Unlock()
	var pk rxPacket
	select {
	case pk = <-c.ch:
	default:
		c.recycle()
		var err error
		if pk, err = c.wait(); err != nil {
			return 0, nil, err
		}
	}
	n := copy(b, pk.data)
	c.l.inflight.Done()
	back := append(c.back[pk.q], pk.base)
	c.back[pk.q] = back
	if len(back) >= rxBatch {
		pk.q.recycle(back)
		c.back[pk.q] = back[:0]
	}
	return n, pk.from, nil
}

// wait blocks for a datagram until the read deadline or Close. rmu held.
func (c *packetConn) wait() (rxPacket, error) {
	for {
		var timeout <-chan time.Time
		var t *time.Timer
		if dl := c.rdl.Load(); dl != 0 {
			d := time.Until(time.Unix(0, dl))
			if d <= 0 {
				return rxPacket{}, os.ErrDeadlineExceeded
			}
			t = time.NewTimer(d)
			timeout = t.C
		}
		var pk rxPacket
		var err error
		woken := false
		select {
		case pk = <-c.ch:
		case <-c.done:
			err = net.ErrClosed
		case <-timeout:
			err = os.ErrDeadlineExceeded
		case <-c.rwake: // the deadline changed
			woken = true
		}
		if t != nil {
			t.Stop()
		}
		if !woken {
			return pk, err
		}
	}
}

// recycle returns the frames ReadFrom has copied out. rmu held.
func (c *packetConn) recycle() {
	for q, back := range c.back {
		q.recycle(back)
		c.back[q] = back[:0]
	}
}

// WriteTo implements net.PacketConn: b goes out in one frame to addr,
// which must be an address a datagram came from. The kick is left to the
// flusher, or made here once txBatch frames wait, so a burst of writes
// costs one syscall rather than one each.
func (c *packetConn) WriteTo(b []byte, addr net.Addr) (int, error) {
	select {
	case <-c.done:
		return 0, net.ErrClosed
	default:
	}
	if dl := c.wdl.Load(); dl != 0 && time.Now().UnixNano() >= dl {
		return 0, os.ErrDeadlineExceeded
	}
	ua, ok := addr.(*net.UDPAddr)
	var ip4 net.IP
	if ok {
		ip4 = ua.IP.To4()
	}
	if ip4 == nil || ua.Port <= 0 || ua.Port > 65535 {
		return 0, ErrNotUDP
	}
	p := c.lookup(udpAddr{ip: [4]byte(ip4), port: uint16(ua.Port)})
	if p == nil {
		// No datagram came from addr (or, under a flood of forged
		// senders, none within the last maxPeers/2 new ones), so its MAC
		// is unknown: the transport does no ARP. The datagram is lost and
		// counted, as a UDP socket loses one whose neighbour does not
		// resolve, rather than an error: quic-go closes a connection on
		// any write error, and QUIC recovers a lost datagram itself.
		c.noRoute.Add(1)
		return len(b), nil
	}
	if len(b) > c.l.maxReply {
		return 0, ErrFrameTooLarge
	}
	q := p.q
	c.l.txGate.RLock()
	defer c.l.txGate.RUnlock()
	if c.l.unmapped {
		return 0, ErrClosed
	}
	a, err := q.allocTX()
	if errors.Is(err, ErrTXFull) {
		// Every frame stayed in flight through allocTX's waits: lost
		// (and counted in TXFull), as a UDP socket's full queue loses a
		// datagram, not an error that would end a QUIC connection.
		return len(b), nil
	}
	if err != nil {
		return 0, err
	}
	buf := q.sock.Buffer(a)
	copy(buf[udpHeadersAt:], b)
	wake, err := q.enqueue(a, writeHeaders(buf, p.e, len(b)))
	if errors.Is(err, ErrTXFull) {
		return len(b), nil // lost and counted, as above
	}
	if err != nil {
		return 0, err
	}
	if wake {
		if q.unkicked.Add(1) >= txBatch {
			q.unkicked.Store(0)
			if err := q.kick(); err != nil {
				return 0, err
			}
		} else if q.flushing.CompareAndSwap(false, true) {
			c.kicks <- q // room: one entry per queue, at most one pending each
		}
	}
	return len(b), nil
}

// flusher kicks the queues WriteTo left frames on. It yields once first,
// so that the writer's burst joins the same kick.
func (c *packetConn) flusher() {
	defer c.flush.Done()
	for {
		select {
		case q := <-c.kicks:
			runtime.Gosched()
			q.flushing.Store(false)
			q.unkicked.Store(0)
			c.l.txGate.RLock()
			if !c.l.unmapped {
				q.kick()
			}
			c.l.txGate.RUnlock()
		case <-c.done:
			return
		}
	}
}

// Close implements net.PacketConn: ReadFrom and WriteTo return
// net.ErrClosed, and datagrams arriving from now on are dropped. The
// Listener goes on until it is closed.
func (c *packetConn) Close() error {
	c.once.Do(func() {
		close(c.done)
		c.flush.Wait()
		c.rmu.Lock()
		c.recycle()
		c.rmu.Unlock()
		c.drain()
	})
	return nil
}

// drain returns the frames of datagrams nobody read.
func (c *packetConn) drain() {
	for {
		select {
		case pk := <-c.ch:
			pk.q.recycle([]uint64{pk.base})
			c.l.inflight.Done()
		default:
			return
		}
	}
}

// LocalAddr implements net.PacketConn.
func (c *packetConn) LocalAddr() net.Addr { return &c.local }

// SetDeadline implements net.PacketConn.
func (c *packetConn) SetDeadline(t time.Time) error {
	c.SetReadDeadline(t)
	return c.SetWriteDeadline(t)
}

// SetReadDeadline implements net.PacketConn; a blocked ReadFrom sees the
// new deadline at once.
func (c *packetConn) SetReadDeadline(t time.Time) error {
	c.rdl.Store(deadlineNanos(t))
	select {
	case c.rwake <- struct{}{}:
	default:
	}
	return nil
}

// SetWriteDeadline implements net.PacketConn. WriteTo never blocks longer
// than its bounded wait for a TX frame; a deadline already past fails it.
func (c *packetConn) SetWriteDeadline(t time.Time) error {
	c.wdl.Store(deadlineNanos(t))
	return nil
}

func deadlineNanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return max(t.UnixNano(), 1)
}

// SetReadBuffer and SetWriteBuffer succeed and do nothing: the rings and
// the UMEM are the buffers, sized by Config. quic-go probes for them and
// would log a warning about UDP buffer sizes without them.
func (c *packetConn) SetReadBuffer(int) error  { return nil }
func (c *packetConn) SetWriteBuffer(int) error { return nil }
