package xdp

import (
	"net"
	"strconv"
	"sync"

	"github.com/simdedge/simdedge/server"
)

// useTCPResponse is the whole reply to a request whose response does not
// fit one datagram. 507 ("the server is unable to store the
// representation needed", RFC 4918 §11.5) is the nearest standard status;
// the reason phrase and the Simdedge-Retry header say what to do, and
// DatagramClient turns it into ErrUseTCP.
const useTCPResponse = "HTTP/1.1 507 Response Too Large For Datagram\r\n" +
	"Content-Type: text/plain\r\n" +
	"Simdedge-Retry: tcp\r\n" +
	"Content-Length: 50\r\n" +
	"\r\n" +
	"response larger than one datagram; retry over TCP\n"

// datagramListener is the server.MessageListener of the UDP port: the RX
// loops hand it datagrams, Receive gives them to the server.
type datagramListener struct {
	l    *Listener
	ch   chan *datagram
	done chan struct{}
	once sync.Once
	pool sync.Pool
	addr net.UDPAddr
}

var _ server.MessageListener = (*datagramListener)(nil)

func newDatagramListener(l *Listener, queues []int, rxFrames int) *datagramListener {
	d := &datagramListener{
		l: l,
		// Room for every receive frame of every queue: a full channel
		// would mean frames all held by the server anyway.
		ch:   make(chan *datagram, rxFrames*len(queues)),
		done: make(chan struct{}),
		addr: net.UDPAddr{IP: net.IP(l.addr[:]), Port: l.cfg.UDPPort},
	}
	if l.anyAddr {
		d.addr.IP = net.IPv4zero
	}
	d.pool.New = func() any { return &datagram{} }
	return d
}

// Datagrams returns the message listener of the UDP port, nil when
// UDPPort is 0. Each message is one request datagram, parsed in place in
// its UMEM frame; its Reply writes the response into a transmit frame.
func (l *Listener) Datagrams() server.MessageListener {
	if l.dgrams == nil {
		return nil
	}
	return l.dgrams
}

// deliver hands a received datagram to Receive; false leaves the frame to
// the caller (listener closed, or the server is not keeping up).
func (l *Listener) deliver(q *queue, base uint64, f []byte, start, end int) bool {
	if pc := l.pconn.Load(); pc != nil {
		return pc.deliver(q, base, f, start, end)
	}
	d := l.dgrams
	if d == nil {
		return false
	}
	select {
	case <-d.done:
		return false
	default:
	}
	m := d.pool.Get().(*datagram)
	*m = datagram{q: q, d: d, base: base, frame: f, data: f[start:end:end]}
	ip := f[ethLen:]
	m.remote = udpAddr{ip: [4]byte(ip[ipSrc : ipSrc+4]), port: uint16(ip[ipv4Len])<<8 | uint16(ip[ipv4Len+1])}
	l.inflight.Add(1)
	// Counted before the server can see it, so a client that got its
	// answer reads a count that includes its request.
	q.datagrams.Add(1)
	select {
	case d.ch <- m:
		return true
	default:
		q.datagrams.Add(^uint64(0))
		l.inflight.Done()
		d.pool.Put(m)
		return false
	}
}

// Receive implements server.MessageListener.
func (d *datagramListener) Receive() (server.Message, error) {
	select {
	case m := <-d.ch:
		return m, nil
	case <-d.done:
		return nil, net.ErrClosed
	}
}

// Close stops Receive. The XDP transport keeps running until the
// Listener is closed; datagrams arriving meanwhile are dropped.
func (d *datagramListener) Close() error {
	d.once.Do(func() { close(d.done) })
	return nil
}

// Addr implements server.MessageListener.
func (d *datagramListener) Addr() net.Addr { return &d.addr }

// drain releases datagrams nobody received (after the RX loops stopped).
func (d *datagramListener) drain() {
	for {
		select {
		case m := <-d.ch:
			m.Release()
		default:
			return
		}
	}
}

// datagram is one request datagram in its receive frame.
type datagram struct {
	q      *queue
	d      *datagramListener
	base   uint64 // the receive frame
	frame  []byte // the received Ethernet frame
	data   []byte // the UDP payload: the request
	remote udpAddr

	tx      uint64 // the transmit frame, when hasTX
	hasTX   bool
	pending int  // payload bytes held in the transmit frame, unsent
	over    bool // the response outgrew a datagram
	one     [1]uint64
}

var _ server.Message = (*datagram)(nil)

// Data implements server.Message: the payload, in place in the UMEM.
func (m *datagram) Data() []byte { return m.data }

// RemoteAddr implements server.Message.
func (m *datagram) RemoteAddr() net.Addr { return &m.remote }

// MaxReply implements server.Message: one datagram's payload.
func (m *datagram) MaxReply() int { return m.q.l.maxReply }

// Reply implements server.Message. A reply with more set is held in the
// transmit frame: if the response ends there (the server's final Reply is
// empty) it goes out; if more bytes follow, the response cannot be one
// datagram and the client gets useTCPResponse instead.
func (m *datagram) Reply(b []byte, more bool) error {
	if m.over {
		return ErrReplyTooLarge
	}
	if len(b) > m.MaxReply() || m.pending > 0 && len(b) > 0 {
		return m.tooLarge()
	}
	if len(b) > 0 || m.pending == 0 {
		if err := m.hold(b); err != nil {
			return err
		}
	}
	if more {
		return nil
	}
	return m.send(m.pending)
}

// hold copies b into the transmit frame, after the headers' room.
func (m *datagram) hold(b []byte) error {
	if !m.hasTX {
		a, err := m.q.allocTX()
		if err != nil {
			return err
		}
		m.tx, m.hasTX = a, true
	}
	copy(m.q.sock.Buffer(m.tx)[udpHeadersAt:], b)
	m.pending = len(b)
	return nil
}

// send writes the headers in front of n payload bytes and transmits.
func (m *datagram) send(n int) error {
	n = writeReplyHeaders(m.q.sock.Buffer(m.tx), m.frame, n)
	m.hasTX, m.pending = false, 0
	return m.q.send(m.tx, n)
}

func (m *datagram) tooLarge() error {
	m.over = true
	if err := m.hold([]byte(useTCPResponse)); err != nil {
		return err
	}
	if err := m.send(len(useTCPResponse)); err != nil {
		return err
	}
	return ErrReplyTooLarge
}

// Release implements server.Message: the receive frame goes back to the
// fill ring.
func (m *datagram) Release() {
	q, d := m.q, m.d
	if m.hasTX {
		q.freeTX(m.tx)
	}
	m.one[0] = m.base
	q.recycle(m.one[:])
	*m = datagram{}
	d.pool.Put(m)
	q.l.inflight.Done()
}

// udpAddr is a datagram's source, kept in the pooled message so
// RemoteAddr allocates nothing.
type udpAddr struct {
	ip   [4]byte
	port uint16
}

func (a *udpAddr) Network() string { return "udp" }
func (a *udpAddr) String() string {
	return net.IP(a.ip[:]).String() + ":" + strconv.Itoa(int(a.port))
}
