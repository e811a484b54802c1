package xdp

import (
	"net"
	"net/netip"
	"sync"

	"github.com/simdedge/simdedge/server"
)

// udpListener is the peer of the datagram fast path: a server.
// MessageListener over a kernel UDP socket, one request per datagram, each
// read into a pooled buffer and answered with one sendto. It is what a
// careful Go server without AF_XDP would do.
type udpListener struct {
	c    *net.UDPConn
	pool sync.Pool
}

// maxUDPReply matches the fast path's limit on a 1500-byte MTU.
const maxUDPReply = 1500 - 20 - 8

func newUDPListener(c *net.UDPConn) *udpListener {
	l := &udpListener{c: c}
	l.pool.New = func() any { return &udpMessage{l: l, buf: make([]byte, 2048), addr: &net.UDPAddr{}} }
	return l
}

func (l *udpListener) Receive() (server.Message, error) {
	m := l.pool.Get().(*udpMessage)
	n, ap, err := l.c.ReadFromUDPAddrPort(m.buf)
	if err != nil {
		l.pool.Put(m)
		return nil, err
	}
	m.data, m.from = m.buf[:n], ap
	return m, nil
}

func (l *udpListener) Close() error   { return l.c.Close() }
func (l *udpListener) Addr() net.Addr { return l.c.LocalAddr() }

type udpMessage struct {
	l    *udpListener
	buf  []byte
	data []byte
	from netip.AddrPort
	addr *net.UDPAddr
	out  []byte
}

func (m *udpMessage) Data() []byte { return m.data }
func (m *udpMessage) RemoteAddr() net.Addr {
	m.addr.IP = m.from.Addr().AsSlice()
	m.addr.Port = int(m.from.Port())
	return m.addr
}
func (m *udpMessage) MaxReply() int { return maxUDPReply }

// Reply sends the response as one datagram; a part with more set is held
// until the last.
func (m *udpMessage) Reply(b []byte, more bool) error {
	if more || len(m.out) > 0 {
		m.out = append(m.out, b...)
		if more {
			return nil
		}
		b = m.out
	}
	_, err := m.l.c.WriteToUDPAddrPort(b, m.from)
	m.out = m.out[:0]
	return err
}

func (m *udpMessage) Release() { m.l.pool.Put(m) }
