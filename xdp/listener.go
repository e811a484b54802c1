package xdp

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/simdedge/simdedge/xdp/internal/xsk"
)

// releaseWait bounds how long Close waits for datagrams still held by
// handlers before it gives up unmapping the UMEM (it leaks the mapping
// rather than pull memory from under a running handler).
const releaseWait = 5 * time.Second

// Listener is the AF_XDP transport on one interface: the attached steering
// program and one AF_XDP socket per configured RX queue.
//
// It is the frame device of a userspace TCP stack (MAC, MTU, Transmit; the
// stack's receive side is HandleStream) and, through Datagrams, a
// server.MessageListener for the UDP fast path.
type Listener struct {
	cfg     Config
	iface   *net.Interface
	prog    *Program
	queues  []*queue
	rxBytes uint64 // UMEM bytes of the receive frames (the first half)

	addr     [4]byte
	anyAddr  bool
	tcpPort  uint16
	udpPort  uint16
	maxReply int

	streamHandler atomic.Pointer[func([]byte)]
	txNext        atomic.Uint32

	dgrams   *datagramListener
	pconn    atomic.Pointer[packetConn] // once opened, it has the UDP port
	inflight sync.WaitGroup             // datagrams delivered and not yet released
	// txGate is held shared by each Transmit while it writes into UMEM and
	// exclusively by Close before it unmaps, so a Transmit racing Close
	// (a userspace stack flushing a segment as it is stopped) returns
	// ErrClosed instead of writing to unmapped memory.
	txGate   sync.RWMutex
	unmapped bool
	loops    sync.WaitGroup
	once     sync.Once
	closeErr error
}

// Listen loads and attaches the steering program to c.Interface and opens
// one AF_XDP socket per queue. Errors wrap ErrPermission, ErrNoInterface,
// ErrKernel, ErrDriver, ErrQueue or ErrConfig, with the detail.
func Listen(c Config) (l *Listener, err error) {
	c, err = c.withDefaults()
	if err != nil {
		return nil, err
	}
	iface, err := net.InterfaceByName(c.Interface)
	if err != nil {
		return nil, fmt.Errorf("%w: %q", ErrNoInterface, c.Interface)
	}
	if err := checkCapabilities(); err != nil {
		return nil, err
	}
	if err := checkQueues(c.Interface, c.Queues); err != nil {
		return nil, err
	}
	maxQ := 0
	for _, q := range c.Queues {
		maxQ = max(maxQ, q)
	}
	l = &Listener{cfg: c, iface: iface, tcpPort: uint16(c.TCPPort), udpPort: uint16(c.UDPPort)}
	if c.Address.IsValid() {
		l.addr = c.Address.As4()
	} else {
		l.anyAddr = true
	}
	// A reply must fit one UMEM frame and one MTU-sized IP packet.
	l.maxReply = min(c.FrameSize, iface.MTU+ethLen) - udpHeadersAt
	prog, err := LoadProgram(c.Address, c.TCPPort, c.UDPPort, maxQ+1)
	if err != nil {
		return nil, err
	}
	l.prog = prog
	started := l // the named result is nil on the error returns below
	defer func() {
		if err != nil {
			started.shutdown()
		}
	}()
	rxFrames := c.Frames / 2
	l.rxBytes = uint64(rxFrames * c.FrameSize)
	if c.UDPPort != 0 {
		l.dgrams = newDatagramListener(l, c.Queues, rxFrames)
	}
	for _, id := range c.Queues {
		s, err := xsk.Open(xsk.Options{Ifindex: iface.Index, Queue: id, Frames: c.Frames, FrameSize: c.FrameSize, RingSize: c.RingSize})
		if err != nil {
			return nil, socketErr(id, err)
		}
		q := &queue{l: l, id: id, sock: s, comp: make([]uint64, rxBatch)}
		l.queues = append(l.queues, q)
		fill := make([]uint64, rxFrames)
		for i := range fill {
			fill[i] = uint64(i * c.FrameSize)
		}
		q.recycle(fill)
		for i := rxFrames; i < c.Frames; i++ {
			q.txFree = append(q.txFree, uint64(i*c.FrameSize))
		}
		if err := prog.Register(id, s.FD()); err != nil {
			return nil, err
		}
	}
	// Attach last: until now the service's frames went to the kernel.
	if err := prog.Attach(iface.Index, c.Mode); err != nil {
		return nil, err
	}
	for _, q := range l.queues {
		l.loops.Add(1)
		go q.rxLoop(&l.loops)
	}
	c.Logger.Info("xdp attached", "interface", c.Interface, "ifindex", iface.Index, "mode", string(c.Mode),
		"queues", c.Queues, "tcp_port", c.TCPPort, "udp_port", c.UDPPort)
	return l, nil
}

// socketErr explains a failed AF_XDP socket.
func socketErr(queue int, err error) error {
	switch {
	case errors.Is(err, xsk.ErrNoAFXDP):
		return fmt.Errorf("%w: %w", ErrKernel, err)
	case errors.Is(err, xsk.ErrPermission):
		return fmt.Errorf("%w: %w", ErrPermission, err)
	case errors.Is(err, xsk.ErrQueue):
		return fmt.Errorf("%w: %w", ErrQueue, err)
	}
	return fmt.Errorf("xdp: socket for queue %d: %w", queue, err)
}

// checkQueues fails with ErrQueue when a queue is beyond the interface's
// RX queues as sysfs lists them. sysfs shows the network namespace it was
// mounted in, which need not be the caller's (ip netns exec remounts it;
// a thread that switched namespaces does not): when the interface is not
// there, the socket's bind reports a missing queue instead.
func checkQueues(iface string, queues []int) error {
	ents, err := os.ReadDir("/sys/class/net/" + iface + "/queues")
	if err != nil {
		return nil
	}
	n := 0
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "rx-") {
			n++
		}
	}
	for _, q := range queues {
		if q >= n {
			return fmt.Errorf("%w: queue %d (the interface has %s)", ErrQueue, q, strconv.Itoa(n))
		}
	}
	return nil
}

// MAC returns the interface's hardware address.
func (l *Listener) MAC() net.HardwareAddr { return l.iface.HardwareAddr }

// MTU returns the interface's MTU: the largest IP packet, without the
// Ethernet header.
func (l *Listener) MTU() int { return l.iface.MTU }

// Program returns the attached steering program (counters, Inject).
func (l *Listener) Program() *Program { return l.prog }

// HandleStream sets the function that receives every frame steered to the
// TCP port, on the RX goroutine of its queue. The frame is valid only
// during the call: the handler copies what it keeps. Until it is set such
// frames are dropped.
func (l *Listener) HandleStream(h func(frame []byte)) { l.streamHandler.Store(&h) }

// Transmit sends one Ethernet frame. The frame is copied into a transmit
// frame of the UMEM before Transmit returns; it is safe for concurrent
// use. Queues take turns.
func (l *Listener) Transmit(frame []byte) error {
	if len(frame) > l.cfg.FrameSize || len(frame) > l.iface.MTU+ethLen {
		return ErrFrameTooLarge
	}
	l.txGate.RLock()
	defer l.txGate.RUnlock()
	if l.unmapped {
		return ErrClosed
	}
	q := l.queues[int(l.txNext.Add(1))%len(l.queues)]
	a, err := q.allocTX()
	if err != nil {
		return err
	}
	copy(q.sock.Buffer(a), frame)
	return q.send(a, len(frame)) // on failure send keeps the frame
}

// Stats are the transport's counters.
type Stats struct {
	Program Counters
	// Received frames; Stream and Datagrams handed on; Dropped (no stream
	// handler, bad header or checksum, message queue full); Sent frames;
	// TXFull transmit failures for want of a free frame.
	Received, Stream, Datagrams, Dropped, Sent, TXFull uint64
	// NoRoute: datagrams the PacketConn's WriteTo dropped because no
	// datagram came from their address (so its MAC is unknown).
	NoRoute uint64
	// From the kernel (XDP_STATISTICS): frames it dropped for want of a
	// fill-ring frame (RXDropped) or of RX ring room (RXRingFull), and
	// the times it found the fill ring empty (FillEmpty).
	RXDropped, RXRingFull, FillEmpty uint64
}

// Stats returns the counters summed over queues.
func (l *Listener) Stats() (Stats, error) {
	var s Stats
	var err error
	s.Program, err = l.prog.Counters()
	if pc := l.pconn.Load(); pc != nil {
		s.NoRoute = pc.noRoute.Load()
	}
	for _, q := range l.queues {
		s.Received += q.received.Load()
		s.Stream += q.stream.Load()
		s.Datagrams += q.datagrams.Load()
		s.Dropped += q.dropped.Load()
		s.Sent += q.sent.Load()
		s.TXFull += q.txFull.Load()
		if ks, e := q.sock.Stats(); e == nil {
			s.RXDropped += ks.Rx_dropped
			s.RXRingFull += ks.Rx_ring_full
			s.FillEmpty += ks.Rx_fill_ring_empty_descs
		}
	}
	return s, err
}

// Close detaches the program, stops the RX loops, closes the sockets and
// unmaps them once every datagram handed to the server is released.
func (l *Listener) Close() error {
	l.once.Do(l.shutdown)
	return l.closeErr
}

func (l *Listener) shutdown() {
	var errs []error
	// Detach first, so the service's frames go back to the kernel at once.
	if l.prog != nil {
		errs = append(errs, l.prog.Close())
	}
	if l.dgrams != nil {
		l.dgrams.Close()
	}
	pc := l.pconn.Load()
	if pc != nil {
		pc.Close()
	}
	for _, q := range l.queues {
		errs = append(errs, q.sock.Close())
	}
	l.loops.Wait()
	if l.dgrams != nil {
		l.dgrams.drain()
	}
	if pc != nil {
		pc.drain() // what an RX loop delivered as Close began
	}
	released := make(chan struct{})
	go func() { l.inflight.Wait(); close(released) }()
	select {
	case <-released:
	case <-time.After(releaseWait):
		l.cfg.Logger.Error("xdp: datagrams still held by handlers; UMEM left mapped")
		l.closeErr = errors.Join(errs...)
		return
	}
	l.txGate.Lock()
	l.unmapped = true
	l.txGate.Unlock()
	for _, q := range l.queues {
		q.fillMu.Lock()
		q.txMu.Lock()
		q.dead = true
		q.txMu.Unlock()
		q.fillMu.Unlock()
		q.sock.Unmap()
	}
	l.cfg.Logger.Info("xdp detached", "interface", l.cfg.Interface)
	l.closeErr = errors.Join(errs...)
}
