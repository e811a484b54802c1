//go:build rdma && cgo

package rdma

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/simdedge/simdedge/server"
)

// MessageListener accepts RDMA connections and yields their requests as
// server.Messages; serve it with server.(*Server).ServeMessages. It is safe
// for concurrent use.
type MessageListener struct {
	cfg ListenConfig
	f   *Fabric
	l   *Listener

	mu     sync.Mutex
	cond   sync.Cond
	queue  []*message // received, not yet taken by Receive
	closed bool
	conns  map[*serverConn]struct{}
	// live counts connections whose regions are not freed yet; the
	// fabric closes when the listener is closed and live is zero.
	live     int
	accepted int
	done     chan struct{} // the accept loop ended

	// inline is the server's inline serve function (SetInline), nil
	// when none is set or cfg.NoInline.
	inline  atomic.Pointer[func(server.Message) bool]
	inlined atomic.Int64
	late    atomic.Int64 // inline requests with a late reply (tests)
}

var (
	_ server.MessageListener       = (*MessageListener)(nil)
	_ server.InlineMessageListener = (*MessageListener)(nil)
)

// SetInline implements server.InlineMessageListener: unless
// ListenConfig.NoInline, each connection's poller offers the requests
// that fit a message to serve before queueing them for Receive.
// Rendezvous requests always go through Receive.
func (ml *MessageListener) SetInline(serve func(server.Message) bool) {
	if serve == nil || ml.cfg.NoInline {
		ml.inline.Store(nil)
		return
	}
	ml.inline.Store(&serve)
}

// ListenMessages listens for connections at cfg.Address.
func ListenMessages(cfg ListenConfig) (*MessageListener, error) {
	if err := checkWindow(&cfg.Provider, &cfg.Credits, &cfg.MessageSize); err != nil {
		return nil, err
	}
	spin, err := checkPoll(cfg.Poll, cfg.Spin)
	if err != nil {
		return nil, err
	}
	cfg.Spin = spin
	if cfg.MaxBody == 0 {
		cfg.MaxBody = DefaultMaxBody
	}
	if cfg.ReplyTimeout <= 0 {
		cfg.ReplyTimeout = DefaultReplyTimeout
	}
	host, _, err := net.SplitHostPort(cfg.Address)
	if err != nil {
		return nil, fmt.Errorf("%w: %q is not host:port", ErrAddr, safeAddr(cfg.Address))
	}
	f, err := OpenFabric(Options{Provider: cfg.Provider, Node: host, CQSize: cqSize(cfg.Credits), pollFD: cfg.Poll == PollBusy})
	if err != nil {
		return nil, err
	}
	l, err := f.Listen(cfg.Address)
	if err != nil {
		f.Close()
		return nil, err
	}
	ml := &MessageListener{cfg: cfg, f: f, l: l, conns: map[*serverConn]struct{}{}, done: make(chan struct{})}
	ml.cond.L = &ml.mu
	go ml.acceptLoop()
	return ml, nil
}

// cqSize fits a window: its receives, as many sends, reads and control.
func cqSize(credits int) int { return max(DefaultCQSize, 2*credits+64) }

func (ml *MessageListener) acceptLoop() {
	defer close(ml.done)
	for {
		ep, err := ml.l.Accept()
		if err != nil {
			ml.mu.Lock()
			closed := ml.closed
			ml.mu.Unlock()
			if closed || errors.Is(err, ErrClosed) {
				return
			}
			continue // a failed handshake; the listener stays
		}
		sc := &serverConn{ml: ml, reads: map[uint64]*rdvRead{}, dones: map[uint64]chan error{},
			msgs: make([]message, ml.cfg.Credits)}
		c, err := newConn(ml.f, ep, ml.cfg.Credits, ml.cfg.Credits+2, ml.cfg.MessageSize, newServerWindow(ml.cfg.Credits), ml.cfg.Spin)
		if err != nil {
			continue // newConn closed the endpoint: the client sees it
		}
		sc.c, c.role = c, sc
		ml.mu.Lock()
		if ml.closed {
			ml.mu.Unlock()
			ep.Close()
			c.recv.Close()
			c.send.Close()
			return
		}
		ml.conns[sc] = struct{}{}
		ml.live++
		ml.accepted++
		ml.mu.Unlock()
		c.start()
	}
}

// Receive implements server.MessageListener.
func (ml *MessageListener) Receive() (server.Message, error) {
	ml.mu.Lock()
	defer ml.mu.Unlock()
	for len(ml.queue) == 0 && !ml.closed {
		ml.cond.Wait()
	}
	if ml.closed {
		return nil, fmt.Errorf("%w: %w", ErrClosed, net.ErrClosed)
	}
	m := ml.queue[0]
	n := copy(ml.queue, ml.queue[1:])
	ml.queue[n] = nil
	// Shifting keeps the backing array (the queue is short: at most the
	// credits of the connections), so push appends without allocating.
	ml.queue = ml.queue[:n]
	return m, nil
}

func (ml *MessageListener) push(m *message) bool {
	ml.mu.Lock()
	defer ml.mu.Unlock()
	if ml.closed {
		return false
	}
	ml.queue = append(ml.queue, m)
	ml.cond.Signal()
	return true
}

// Close stops accepting, closes every connection and fails Receive.
// Messages being served stay valid until released; the fabric is closed
// after the last of them.
func (ml *MessageListener) Close() error {
	ml.mu.Lock()
	if ml.closed {
		ml.mu.Unlock()
		return nil
	}
	ml.closed = true
	queued := ml.queue
	ml.queue = nil
	conns := make([]*serverConn, 0, len(ml.conns))
	for sc := range ml.conns {
		conns = append(conns, sc)
	}
	ml.cond.Broadcast()
	ml.mu.Unlock()
	for _, m := range queued {
		m.Release()
	}
	err := ml.l.Close()
	<-ml.done
	for _, sc := range conns {
		sc.c.close()
	}
	ml.maybeCloseFabric()
	return err
}

func (ml *MessageListener) maybeCloseFabric() {
	ml.mu.Lock()
	last := ml.closed && ml.live == 0 && ml.f != nil
	f := ml.f
	if last {
		ml.f = nil
	}
	ml.mu.Unlock()
	if last {
		f.Close()
	}
}

// Addr implements server.MessageListener.
func (ml *MessageListener) Addr() net.Addr { return ml.l.Addr() }

// ListenerStats counts a MessageListener's connections and buffers.
type ListenerStats struct {
	Accepted  int // connections accepted since Listen
	Connected int // connections not closed
	Open      int // connections whose buffers are not freed yet
	Held      int // receive slots held by messages being served
	Queued    int // messages waiting for Receive
	Inlined   int // requests served on a poller (SetInline) since Listen
}

// Stats returns the listener's counts.
func (ml *MessageListener) Stats() ListenerStats {
	ml.mu.Lock()
	s := ListenerStats{Accepted: ml.accepted, Connected: len(ml.conns), Open: ml.live, Queued: len(ml.queue),
		Inlined: int(ml.inlined.Load())}
	conns := make([]*serverConn, 0, len(ml.conns))
	for sc := range ml.conns {
		conns = append(conns, sc)
	}
	ml.mu.Unlock()
	for _, sc := range conns {
		h, _ := sc.c.stats()
		s.Held += h
	}
	return s
}

// serverConn is the server half of a connection.
type serverConn struct {
	ml *MessageListener
	c  *conn
	// reads are rendezvous requests being read, by token; dones are
	// Replies waiting for the client to read their advert, by request id.
	// Both are guarded by c.mu.
	reads     map[uint64]*rdvRead
	nextToken uint64
	dones     map[uint64]chan error
	// msgs has one message per receive slot, reused: a request in a slot
	// allocates nothing.
	msgs []message
}

type rdvRead struct {
	m       *message
	pending int
	err     error
}

func (sc *serverConn) onMessage(slot int, h header, msg []byte) {
	c := sc.c
	switch h.kind {
	case kindRequest:
		m := &sc.msgs[slot]
		*m = message{sc: sc, slot: slot, id: h.id, data: msg[headerSize:], envelope: h.flags&flagEnvelope != 0}
		if serve := sc.ml.inline.Load(); serve != nil {
			m.inline = true
			if (*serve)(m) {
				sc.ml.inlined.Add(1)
				return // served, replied and released
			}
			m.inline = false
		}
		if !sc.ml.push(m) {
			c.releaseSlot(slot)
		}
	case kindAdvert:
		if h.flags&flagMore != 0 { // only the server's response parts continue
			c.releaseSlot(slot)
			c.fail(protoErr(ErrFlags))
			return
		}
		sc.startRead(slot, h, msg)
	case kindDone, kindError:
		c.mu.Lock()
		ch := sc.dones[h.id]
		delete(sc.dones, h.id)
		c.mu.Unlock()
		if ch != nil {
			var err error
			if h.kind == kindError {
				err = errorOf(msg)
			}
			ch <- err
		}
		c.releaseSlot(slot)
	default: // responses and continuations flow the other way
		c.releaseSlot(slot)
		c.fail(protoErr(ErrKind))
	}
}

// startRead begins the rendezvous of a request: a region for all of it,
// the inline prefix copied to its front, the rest read behind it.
func (sc *serverConn) startRead(slot int, h header, msg []byte) {
	c := sc.c
	d, prefix := parseDescriptor(msg)
	total := uint64(len(prefix)) + d.length
	if d.length > uint64(sc.ml.cfg.MaxBody) || total > uint64(sc.ml.cfg.MaxBody) {
		c.releaseSlot(slot)
		c.sendControl(kindError, h.id, errCodeTooLarge)
		return
	}
	r, err := sc.ml.f.Register(int(total))
	if err != nil {
		c.releaseSlot(slot)
		c.sendControl(kindError, h.id, errCodeRendezvous)
		return
	}
	copy(r.Bytes(), prefix)
	off := len(prefix)
	c.releaseSlot(slot) // the prefix is copied: the slot is free again
	m := &message{sc: sc, slot: -1, id: h.id, big: r, data: r.Bytes()[:total], envelope: h.flags&flagEnvelope != 0}
	c.mu.Lock()
	sc.nextToken++
	token := sc.nextToken
	rd := &rdvRead{m: m}
	sc.reads[token] = rd
	c.refs++ // the message's region outlives the slot
	c.mu.Unlock()
	n, err := c.postRead(r, off, d, token)
	c.mu.Lock()
	rd.pending += n
	if err != nil {
		rd.err = err
	}
	finished := rd.pending == 0
	if finished {
		delete(sc.reads, token)
	}
	c.mu.Unlock()
	if finished {
		sc.readDone(rd, h.id)
	}
}

func (sc *serverConn) onRead(token uint64, err error) {
	c := sc.c
	c.mu.Lock()
	rd := sc.reads[token]
	if rd == nil {
		c.mu.Unlock()
		return
	}
	rd.pending--
	if err != nil && rd.err == nil {
		rd.err = err
	}
	finished := rd.pending == 0
	if finished {
		delete(sc.reads, token)
	}
	c.mu.Unlock()
	if finished {
		sc.readDone(rd, rd.m.id)
	}
}

// readDone tells the client its buffer is free and serves the request, or
// reports the failed read.
func (sc *serverConn) readDone(rd *rdvRead, id uint64) {
	c := sc.c
	if rd.err != nil {
		rd.m.big.Close()
		c.unref()
		c.sendControl(kindError, id, errCodeRendezvous)
		return
	}
	c.sendControl(kindDone, id, 0)
	if !sc.ml.push(rd.m) {
		rd.m.Release()
	}
}

func (sc *serverConn) onClose(err error) {
	c := sc.c
	c.mu.Lock()
	dones := sc.dones
	sc.dones = map[uint64]chan error{}
	reads := sc.reads
	sc.reads = map[uint64]*rdvRead{}
	c.mu.Unlock()
	for _, ch := range dones {
		ch <- errors.Join(ErrConnLost, err)
	}
	for _, rd := range reads {
		// The endpoint is closed: no READ still writes the region.
		rd.m.big.Close()
		c.unref()
	}
	ml := sc.ml
	ml.mu.Lock()
	delete(ml.conns, sc)
	ml.mu.Unlock()
}

func (sc *serverConn) onFree() {
	ml := sc.ml
	ml.mu.Lock()
	ml.live--
	ml.mu.Unlock()
	ml.maybeCloseFabric()
}

// message is one request: a view of a receive slot, or of its own region
// when it came by rendezvous.
type message struct {
	sc       *serverConn
	slot     int
	id       uint64
	data     []byte
	big      *Region
	released bool
	envelope bool // flagEnvelope: data is a request envelope
	// inline: served on the poller (SetInline); its replies must not
	// wait for the queue the poller reads (see replyInline). late
	// carries its replies once one had to wait.
	inline bool
	late   *lateReply
}

var _ server.EnvelopeMessage = (*message)(nil)

func (m *message) Data() []byte { return m.data }

// Envelope implements server.EnvelopeMessage: the client sent the request
// as a FlatBuffers envelope (Client.RoundTripEnvelope).
func (m *message) Envelope() bool       { return m.envelope }
func (m *message) RemoteAddr() net.Addr { return m.sc.c.ep.RemoteAddr() }

// MaxReply is 0: parts larger than a message go by rendezvous.
func (m *message) MaxReply() int { return 0 }

// Reply sends b as one response message, or by rendezvous when it does not
// fit one; then it waits until the client has read it.
func (m *message) Reply(b []byte, more bool) error {
	if m.inline {
		return m.replyInline(b, more)
	}
	return m.sc.reply(m.id, b, more)
}

// reply sends response part b of request id: one message, or a rendezvous
// advert, waiting for a credit, a send slot and (rendezvous) the client's
// done.
func (sc *serverConn) reply(id uint64, b []byte, more bool) error {
	c := sc.c
	if headerSize+len(b) <= c.msgSize {
		k := kindResponse
		if more {
			k = kindContinuation
		}
		return c.sendData(header{kind: k, id: id}, b)
	}
	r, err := sc.ml.f.Register(len(b))
	if err != nil {
		return err
	}
	defer r.Close() // after the client's done (or the connection's end)
	copy(r.Bytes(), b)
	ch := make(chan error, 1)
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return ErrConnLost
	}
	sc.dones[id] = ch
	c.mu.Unlock()
	var desc [descriptorSize]byte
	(&descriptor{addr: r.Addr(0), length: uint64(len(b)), key: r.Key()}).put(desc[:])
	var flags uint16
	if more {
		flags = flagMore
	}
	if err := c.sendData(header{kind: kindAdvert, flags: flags, id: id}, desc[:]); err != nil {
		c.mu.Lock()
		delete(sc.dones, id)
		c.mu.Unlock()
		return err
	}
	t := time.NewTimer(sc.ml.cfg.ReplyTimeout)
	defer t.Stop()
	select {
	case err := <-ch:
		return err
	case <-t.C:
		// The client may still read r: closing the connection closes the
		// endpoint before the deferred r.Close.
		c.close()
		return fmt.Errorf("%w: the client did not read a rendezvous response part", ErrTimeout)
	}
}

// replyInline is Reply on the poller. A part that fits a message goes out
// at once when a credit and a send slot are free. Otherwise it cannot
// wait there (credits, free slots and a rendezvous' done come through the
// queue this goroutine reads): it is copied and sent by a goroutine, and
// so is every later part of the same response, in order. Errors of those
// sends close the connection, as they would the server's goroutine's.
func (m *message) replyInline(b []byte, more bool) error {
	if m.late == nil && headerSize+len(b) <= m.sc.c.msgSize {
		k := kindResponse
		if more {
			k = kindContinuation
		}
		sent, err := m.sc.c.trySendData(header{kind: k, id: m.id}, b)
		if sent || err != nil {
			return err
		}
	}
	if m.late == nil {
		m.late = &lateReply{sc: m.sc, id: m.id}
		m.sc.ml.late.Add(1)
	}
	m.late.add(b, more)
	return nil
}

// lateReply sends the response parts of an inline request that could
// not go out at once, in order, from a goroutine of its own.
type lateReply struct {
	sc      *serverConn
	id      uint64
	mu      sync.Mutex
	parts   [][]byte
	more    []bool
	running bool
	failed  bool
}

func (l *lateReply) add(b []byte, more bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.parts = append(l.parts, append([]byte(nil), b...))
	l.more = append(l.more, more)
	if !l.running {
		l.running = true
		go l.send()
	}
}

func (l *lateReply) send() {
	for {
		l.mu.Lock()
		if len(l.parts) == 0 {
			l.running = false
			l.mu.Unlock()
			return
		}
		b, more, failed := l.parts[0], l.more[0], l.failed
		l.parts, l.more = l.parts[1:], l.more[1:]
		l.mu.Unlock()
		if !failed && l.sc.reply(l.id, b, more) != nil {
			l.mu.Lock()
			l.failed = true // the connection is lost: drop the rest
			l.mu.Unlock()
		}
	}
}

// Release implements server.Message: the slot is posted again, or the
// rendezvous region freed.
func (m *message) Release() {
	if m.released {
		return
	}
	m.released = true
	if m.big != nil {
		m.big.Close()
		m.sc.c.unref()
		return
	}
	m.sc.c.releaseSlot(m.slot)
}

// safeAddr returns a printable, bounded form of a configured address.
func safeAddr(s string) string {
	if len(s) > 64 {
		return "(address too long)"
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return "(unprintable address)"
		}
	}
	return s
}
