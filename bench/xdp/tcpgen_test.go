package xdp

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// tcpGen is a raw-frame HTTP/1.1 keep-alive client: it speaks just enough
// TCP, from Ethernet frames it builds itself on an AF_PACKET socket, to
// open conns connections from one address and send GETs on them, one
// outstanding request per connection. No client kernel TCP is involved:
// the next request carries the acknowledgement of the previous response
// (no pure ACKs, no delayed-ACK timers), so the server sees what a NIC
// would hand it from a well-behaved client, and the figure is the
// server's.
//
// It handles what a veth between two namespaces produces: in-order
// segments, no loss, and retransmissions when its own thread was
// descheduled long enough for the server's timers to fire. Anything else
// (a reset, a gap, a stall) ends the run with an error instead of being
// recovered.
//
// Its address must not be the client kernel's, or that kernel would reset
// the connections it knows nothing about: the frames to it are seen by
// the packet socket and then dropped by the kernel as not its own.
type tcpGen struct {
	fd      int
	file    *os.File           // fd in Go's poller: waiting holds no thread in a syscall
	raw     syscall.RawConn    // (a blocking poll(2) would have sysmon hand the P around)
	recv    func(uintptr) bool // raw.Read's callback, made once (no allocation per frame)
	rxN     int
	rxErr   error
	srcMAC  [6]byte
	dstMAC  [6]byte
	src     [4]byte
	dst     [4]byte
	dport   uint16
	conns   []genConn
	req     []byte
	respLen int    // learnt from the first response
	first   []byte // the first response, until its length is known
	tx, rx  []byte

	sendCPU time.Duration // the thread's CPU time inside send(2)
}

// genConn is one connection's sequence space.
type genConn struct {
	sport          uint16
	sndNxt, rcvNxt uint32
	open           bool
	busy           bool // a request is outstanding
	got            int  // bytes of its response received
}

const (
	genBasePort = 20000
	genISN      = 1000
	genWindow   = 65535
	tcpSYN      = 0x02
	tcpRST      = 0x04
	tcpPSH      = 0x08
	tcpACK      = 0x10
	etherIPv4   = 0x0800
	ethLen      = 14
	ipLen       = 20
	tcpLen      = 20
)

var (
	errGenReset = errors.New("tcpgen: connection reset by the server")
	errGenStall = errors.New("tcpgen: no progress before the timeout")
	errGenOrder = errors.New("tcpgen: segment out of order")
)

// newTCPGen opens the packet socket on ifindex in the calling thread's
// network namespace.
func newTCPGen(ifindex int, srcMAC, dstMAC [6]byte, src, dst [4]byte, dport uint16, conns int, req []byte) (*tcpGen, error) {
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, int(htons(unix.ETH_P_IP)))
	if err != nil {
		return nil, fmt.Errorf("tcpgen: packet socket: %w", err)
	}
	g := &tcpGen{fd: fd, srcMAC: srcMAC, dstMAC: dstMAC, src: src, dst: dst, dport: dport, req: req,
		tx: make([]byte, 2048), rx: make([]byte, 65536)}
	// Its own frames would come back to it otherwise.
	err = unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_IGNORE_OUTGOING, 1)
	if err == nil {
		err = unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: htons(unix.ETH_P_IP), Ifindex: ifindex})
	}
	if err == nil {
		err = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, 8<<20)
	}
	if err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("tcpgen: packet socket setup: %w", err)
	}
	g.recv = func(uintptr) bool {
		g.rxN, _, g.rxErr = unix.Recvfrom(g.fd, g.rx, unix.MSG_DONTWAIT)
		return g.rxErr != unix.EAGAIN
	}
	g.file = os.NewFile(uintptr(fd), "tcpgen")
	if g.raw, err = g.file.SyscallConn(); err != nil {
		g.file.Close()
		return nil, err
	}
	for i := range conns {
		g.conns = append(g.conns, genConn{sport: uint16(genBasePort + i), sndNxt: genISN})
	}
	return g, nil
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }

// Close resets the connections, so the server frees them, and closes the
// socket.
func (g *tcpGen) Close() error {
	for i := range g.conns {
		if c := &g.conns[i]; c.open {
			g.send(c, tcpRST, nil)
		}
	}
	return g.file.Close()
}

// send builds and sends one segment of c, advancing its sequence number
// by the payload.
func (g *tcpGen) send(c *genConn, flags byte, payload []byte) error {
	n := ethLen + ipLen + tcpLen + len(payload)
	f := g.tx[:n]
	copy(f[0:6], g.dstMAC[:])
	copy(f[6:12], g.srcMAC[:])
	binary.BigEndian.PutUint16(f[12:], etherIPv4)
	ip := f[ethLen : ethLen+ipLen]
	clear(ip)
	ip[0] = 0x45
	binary.BigEndian.PutUint16(ip[2:], uint16(ipLen+tcpLen+len(payload)))
	binary.BigEndian.PutUint16(ip[6:], 0x4000) // don't fragment
	ip[8], ip[9] = 64, 6
	copy(ip[12:], g.src[:])
	copy(ip[16:], g.dst[:])
	binary.BigEndian.PutUint16(ip[10:], ^fold(sum(ip)))
	t := f[ethLen+ipLen:]
	clear(t[:tcpLen])
	binary.BigEndian.PutUint16(t[0:], c.sport)
	binary.BigEndian.PutUint16(t[2:], g.dport)
	binary.BigEndian.PutUint32(t[4:], c.sndNxt)
	if flags&tcpACK != 0 {
		binary.BigEndian.PutUint32(t[8:], c.rcvNxt)
	}
	t[12] = tcpLen / 4 << 4
	t[13] = flags
	binary.BigEndian.PutUint16(t[14:], genWindow)
	copy(t[tcpLen:], payload)
	pseudo := sum(g.src[:]) + sum(g.dst[:]) + 6 + uint32(len(t))
	binary.BigEndian.PutUint16(t[16:], ^fold(pseudo+sum(t)))
	c.sndNxt += uint32(len(payload))
	if flags&(tcpSYN) != 0 {
		c.sndNxt++
	}
	t0 := threadCPU()
	_, err := unix.Write(g.fd, f)
	for try := 0; err == unix.EAGAIN && try < 100; try++ {
		runtime.Gosched() // the socket's send buffer is full: rare
		_, err = unix.Write(g.fd, f)
	}
	g.sendCPU += threadCPU() - t0
	return err
}

// Open does the three-way handshakes, all connections at once.
func (g *tcpGen) Open(timeout time.Duration) error {
	for i := range g.conns {
		if err := g.send(&g.conns[i], tcpSYN, nil); err != nil {
			return err
		}
	}
	opened := 0
	return g.poll(timeout, func() bool { return opened == len(g.conns) }, func(c *genConn, flags byte, seq uint32, _ []byte) error {
		if flags&(tcpSYN|tcpACK) != tcpSYN|tcpACK || c.open {
			return nil
		}
		c.rcvNxt, c.open = seq+1, true
		opened++
		return g.send(c, tcpACK, nil)
	})
}

// Run sends n requests over the open connections, each one once the
// previous response on its connection is complete, and waits for all the
// responses. The first response sets the length every later one must have
// (the benchmark's handler answers a fixed-size response).
func (g *tcpGen) Run(n int, timeout time.Duration) error {
	sent, done := 0, 0
	next := func(c *genConn) error {
		if sent == n || g.respLen == 0 && sent > 0 {
			return nil
		}
		sent++
		c.busy, c.got = true, 0
		return g.send(c, tcpACK|tcpPSH, g.req)
	}
	for i := range g.conns {
		if err := next(&g.conns[i]); err != nil {
			return err
		}
	}
	return g.poll(timeout, func() bool { return done == n }, func(c *genConn, flags byte, seq uint32, data []byte) error {
		if len(data) == 0 || !c.busy {
			return nil
		}
		// A retransmission (the server's tail-loss probe or RTO fired
		// while this thread was descheduled) is cut to what is new; a
		// gap is not recovered.
		if d := int32(c.rcvNxt - seq); d > 0 {
			if d >= int32(len(data)) {
				return nil
			}
			data = data[d:]
		} else if d < 0 {
			return fmt.Errorf("%w: seq %d, want %d", errGenOrder, seq, c.rcvNxt)
		}
		c.rcvNxt += uint32(len(data))
		c.got += len(data)
		if g.respLen == 0 && !g.learn(data) || c.got < g.respLen {
			return nil
		}
		c.busy = false
		done++
		if g.respLen > 0 && sent == done && sent < n {
			// The first response is in: the other connections
			// start now.
			for i := range g.conns {
				if cc := &g.conns[i]; !cc.busy && cc != c {
					if err := next(cc); err != nil {
						return err
					}
				}
			}
		}
		return next(c)
	})
}

// learn collects the first response until its head and body are in and
// sets respLen.
func (g *tcpGen) learn(data []byte) bool {
	g.first = append(g.first, data...)
	head, body, ok := bytes.Cut(g.first, []byte("\r\n\r\n"))
	if !ok {
		return false
	}
	const cl = "\r\nContent-Length: "
	i := bytes.Index(head, []byte(cl))
	if i < 0 {
		return false
	}
	v := head[i+len(cl):]
	if j := bytes.IndexByte(v, '\r'); j >= 0 {
		v = v[:j]
	}
	bl, err := strconv.Atoi(string(v))
	if err != nil || len(body) < bl {
		return false
	}
	g.respLen = len(head) + 4 + bl
	return true
}

// poll receives segments for the generator's address and hands each to
// fn with its connection, until done reports true. It fails when nothing
// arrives for timeout.
func (g *tcpGen) poll(timeout time.Duration, done func() bool, fn func(c *genConn, flags byte, seq uint32, data []byte) error) error {
	for !done() {
		g.file.SetReadDeadline(time.Now().Add(timeout))
		err := g.raw.Read(g.recv)
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return errGenStall
		}
		if err == nil {
			err = g.rxErr
		}
		if err != nil {
			return err
		}
		c, flags, seq, data, ok := g.parse(g.rx[:g.rxN])
		if !ok {
			continue
		}
		if flags&tcpRST != 0 {
			return fmt.Errorf("%w (port %d)", errGenReset, c.sport)
		}
		if err := fn(c, flags, seq, data); err != nil {
			return err
		}
	}
	return nil
}

// parse finds the connection a frame belongs to; ok is false for frames
// that are not TCP from the server to one of them.
func (g *tcpGen) parse(f []byte) (c *genConn, flags byte, seq uint32, data []byte, ok bool) {
	if len(f) < ethLen+ipLen+tcpLen || binary.BigEndian.Uint16(f[12:]) != etherIPv4 {
		return nil, 0, 0, nil, false
	}
	ip := f[ethLen:]
	ihl := int(ip[0]&0x0f) * 4
	total := int(binary.BigEndian.Uint16(ip[2:]))
	if ip[9] != 6 || [4]byte(ip[16:20]) != g.src || [4]byte(ip[12:16]) != g.dst || ihl < ipLen || total > len(ip) || total < ihl+tcpLen {
		return nil, 0, 0, nil, false
	}
	t := ip[ihl:total]
	port := int(binary.BigEndian.Uint16(t[2:])) - genBasePort
	doff := int(t[12]>>4) * 4
	if binary.BigEndian.Uint16(t[0:]) != g.dport || port < 0 || port >= len(g.conns) || doff < tcpLen || doff > len(t) {
		return nil, 0, 0, nil, false
	}
	return &g.conns[port], t[13], binary.BigEndian.Uint32(t[4:]), t[doff:], true
}
