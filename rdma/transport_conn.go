//go:build rdma && cgo

package rdma

import (
	"errors"
	"runtime"
	"runtime/metrics"
	"sync"
	"time"
)

// Work-request ids: the top byte says what the work is, the rest is a slot
// index or a rendezvous token.
const (
	wrRecv uint64 = 1 << 56
	wrSend uint64 = 2 << 56
	wrRead uint64 = 3 << 56
	wrKind uint64 = 0xff << 56
	// wrSlot masks the slot index (bit 55 is the unsignaled flag).
	wrSlot uint64 = 1<<55 - 1
)

const (
	// readChunk bounds one RDMA READ; larger rendezvous are read in
	// several, all posted at once.
	readChunk = 8 << 20
	// queueFullRetries bounds the retries of a post that found the work
	// queue full (the send queue is sized for the window, so this is a
	// provider hiccup, not back-pressure).
	queueFullRetries = 1000
)

// role is the server or client half of a connection.
type role interface {
	// onMessage handles a received message other than a credit update;
	// c.mu is not held. It must see to it that c.releaseSlot(slot) is
	// called exactly once, now or later.
	onMessage(slot int, h header, msg []byte)
	// onRead handles the completion of an RDMA READ posted with token.
	onRead(token uint64, err error)
	// onClose runs once, after the endpoint was closed, with c.mu not
	// held: fail every waiter and free rendezvous regions.
	onClose(err error)
	// onFree runs once the connection's regions are closed.
	onFree()
}

// conn is one connected endpoint with its slots, credit window and poller.
type conn struct {
	ep      *Endpoint
	role    role
	msgSize int
	recv    *Region // nrecv receive slots
	send    *Region // nsend send slots
	nrecv   int
	nsend   int

	mu       sync.Mutex
	cond     sync.Cond // credits or send slots freed, or closed
	w        window
	freeSend []int
	ctrl     []ctrlMsg // control messages waiting for a credit or a slot
	closed   bool
	err      error
	// refs: the poller, each receive slot held by a message, and each
	// sender copying into a send slot. The regions are closed when the
	// connection is closed and refs reach zero.
	refs  int
	held  int
	freed bool

	// Receives to post again, not yet posted: they go with the next send
	// or the poller's next poll (one cgo call for both), or at once when
	// the poller is parked in Wait (parked). They count as credits only
	// once posted.
	repost    []Span
	repostUpd []bool // the slot had held a credit update
	accounted []bool // repostLocked's scratch, swapped with repostUpd
	parked    bool

	// Sends in flight, in posting order. With selective completion
	// (selective) most sends complete silently; every sigEvery-th send
	// (half the send slots: each completion may wake a waiting poller),
	// and every send once few slots are free, asks for a completion, and
	// that completion frees it and every send posted before it: a
	// connected endpoint completes its sends in order (RC queue pairs; the
	// tcp provider's send queue).
	inflight  []int
	selective bool
	sigEvery  int
	unsig     int
	one       [1]Span // scratch of postSendLocked

	// Who reads the completion queue (see lending below): the poller,
	// nobody, or the RoundTrip driver (owner == ownerCall). Only clients
	// lend (lend). awaiting counts the calls still waiting for a piece
	// of their response. wake (capacity 1) wakes the poller when the
	// queue is handed back or the connection closes.
	lend     bool
	owner    int
	driver   any
	awaiting int
	wake     chan struct{}
	// lendTimer is the poller's (awaitQueue), reused.
	lendTimer *time.Timer
	// driven counts items a driver read from the queue itself (tests).
	driven uint64

	// spin is the PollBusy budget (0: PollBlock): the queue's reader
	// polls instead of blocking until spin has passed since active, the
	// last completion read or send posted (guarded by c.mu).
	spin   time.Duration
	active time.Time
	// kicked: the spinning reader was kicked (Endpoint.kick) for
	// receives queued in repost; the next step withdraws it.
	kicked bool
	// yielded: the last yield of a busy step (step), runnable the
	// sample of othersRunnable; used only by the queue's owner.
	yielded  time.Time
	runnable []metrics.Sample

	// The queue reader's scratch (step): used only by the owner.
	buf   []Completion
	spans []Span
	upd   []bool
}

// Lending the completion queue. A client's RoundTrip that finds nobody
// reading the queue reads it itself (it "drives") until its response is
// in, instead of parking while the poller goroutine reads the queue and
// hands the response over: one goroutine switch (a futex wake-up of an
// idle thread, a context switch on this PVM guest) less per request. The
// poller lends the queue when no call awaits a piece (awaiting == 0) and
// sleeps; it takes the queue back when a caller must wait for credits
// (sendData), when a driver finishes while other calls await pieces, when
// the connection closes, or after lendIdle with nobody reading the queue,
// so that an idle connection still notices a disconnect and posts its
// released receives.
const (
	ownerPoller = iota // the poller goroutine reads the queue
	ownerNone          // lent, nobody reads it: the next RoundTrip drives
	ownerCall          // c.driver, a RoundTrip, reads it
)

// lendIdle is how long the poller leaves a lent queue unread before it
// takes it back.
const lendIdle = 5 * time.Millisecond

// spinChunk bounds one spin in C (Endpoint.spin): between two, the
// reader's goroutine yields, so that goroutines of this process that the
// last completions readied get a P while every P spins, and it looks at
// the spin budget again (a send in the meantime extends it).
const spinChunk = 50 * time.Microsecond

// yieldEvery is how often a spinning reader yields although no other
// goroutine waits for a P: well within the 10 ms after which the runtime
// takes the P of a goroutine that has not been through the scheduler
// (sysmon's forcePreemptNS).
const yieldEvery = 2 * time.Millisecond

type ctrlMsg struct {
	kind kind
	id   uint64
	code uint32
}

// newConn registers the slots, posts every receive and starts the poller.
// On error the endpoint is closed.
func newConn(f *Fabric, ep *Endpoint, nrecv, nsend, msgSize int, w window, spin time.Duration) (*conn, error) {
	c := &conn{ep: ep, msgSize: msgSize, nrecv: nrecv, nsend: nsend, w: w, refs: 1,
		selective: ep.selective(), sigEvery: max(1, nsend/2), spin: spin}
	c.cond.L = &c.mu
	c.wake = make(chan struct{}, 1)
	c.buf = make([]Completion, 64)
	c.spans = make([]Span, 0, nrecv)
	c.upd = make([]bool, 0, nrecv)
	c.repost = make([]Span, 0, nrecv)
	c.repostUpd = make([]bool, 0, nrecv)
	c.accounted = make([]bool, 0, nrecv)
	c.inflight = make([]int, 0, nsend)
	var err error
	if c.recv, err = f.Register(nrecv * msgSize); err != nil {
		ep.Close()
		return nil, err
	}
	if c.send, err = f.Register(nsend * msgSize); err != nil {
		ep.Close()
		c.recv.Close()
		return nil, err
	}
	c.freeSend = make([]int, nsend)
	for i := range c.freeSend {
		c.freeSend[i] = nsend - 1 - i
	}
	spans := make([]Span, nrecv)
	for i := range spans {
		spans[i] = Span{Off: i * msgSize, Len: msgSize, ID: wrRecv | uint64(i)}
	}
	if _, err := ep.PostRecvBatch(c.recv, spans); err != nil {
		ep.Close()
		c.recv.Close()
		c.send.Close()
		return nil, err
	}
	return c, nil
}

// start runs the poller; the role must be set.
func (c *conn) start() { go c.poll() }

// poll is the connection's poller. It reads the completion queue (step)
// while it owns it; a client's poller lends it to RoundTrips when no call
// awaits a piece, and sleeps meanwhile (awaitQueue).
func (c *conn) poll() {
	for c.awaitQueue() {
		if err := c.step(0); err != nil {
			c.fail(err)
			break
		}
		if c.lend {
			c.mu.Lock()
			if c.owner == ownerPoller && c.awaiting == 0 {
				c.owner = ownerNone
			}
			c.mu.Unlock()
		}
	}
	c.mu.Lock()
	c.refs--
	free := c.freeable()
	c.mu.Unlock()
	if free {
		c.free()
	}
}

// awaitQueue returns true once the poller owns the queue, false when the
// connection is closed. While the queue is lent it sleeps, and takes the
// queue back when woken for it or after lendIdle with nobody reading it.
func (c *conn) awaitQueue() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for {
		switch {
		case c.closed:
			return false
		case c.owner == ownerPoller:
			return true
		}
		c.mu.Unlock()
		if c.lendTimer == nil {
			c.lendTimer = time.NewTimer(lendIdle)
		} else {
			c.lendTimer.Reset(lendIdle)
		}
		fired := false
		select {
		case <-c.wake:
			c.lendTimer.Stop()
		case <-c.lendTimer.C:
			fired = true
		}
		c.mu.Lock()
		if fired && c.owner == ownerNone {
			c.owner = ownerPoller
		}
	}
}

// wakePollerLocked hands the queue back to the poller and wakes it. Only
// the driver (for itself) or a caller finding the queue unread
// (ownerNone) may call it: two readers of one queue would share its
// scratch.
func (c *conn) wakePollerLocked() {
	if c.owner != ownerPoller {
		c.owner, c.driver = ownerPoller, nil
	}
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// step reads the queue once: it posts the receives released since the
// last step together with a poll (one cgo call), or, when there are none
// and nothing arrived, spins on the queue in C (PollBusy, within the spin
// budget, at most spinChunk per call) or blocks in Endpoint.Wait (which
// parks the goroutine in Go's network poller; its P goes back to the
// scheduler); then it handles what arrived. Only the queue's owner calls
// it. timeout bounds the wait (0: none; then ErrTimeout).
//
// A busy step yields (runtime.Gosched) after a spin that found nothing,
// and after completions that readied other goroutines (pipelined
// RoundTrips, the server core's handlers): those need a P, and while
// every P is busy, readying them wakes no thread, which is the point of
// spinning. It also yields every yieldEvery while completions keep
// coming: a goroutine that has not been through the scheduler for 10 ms
// is taken for a runaway one, and the runtime takes its P in the middle
// of a spin. (Yielding after an empty spin only when other goroutines
// were runnable, to save the idle thread a yield wakes, measured worse:
// rdma/README.md, fourth pass.)
func (c *conn) step(timeout time.Duration) error {
	c.mu.Lock()
	if c.kicked {
		// Whatever the kick was for is taken below.
		c.kicked = false
		c.ep.unkick()
	}
	c.spans = append(c.spans[:0], c.repost...)
	c.upd = append(c.upd[:0], c.repostUpd...)
	c.repost, c.repostUpd = c.repost[:0], c.repostUpd[:0]
	var budget time.Duration
	var now time.Time
	if c.spin > 0 {
		now = time.Now()
		if left := c.spin - now.Sub(c.active); left > 0 {
			budget = min(left, spinChunk)
		}
	}
	wait := len(c.spans) == 0 && budget == 0
	c.parked = wait
	c.mu.Unlock()
	var n int
	var err error
	switch {
	case len(c.spans) > 0:
		// The receives go out in the call that spins or polls next.
		var posted int
		n, posted, err = c.ep.exchange(c.recv, c.spans, nil, nil, c.buf, budget)
		c.mu.Lock()
		c.accountLocked(c.upd[:min(posted, len(c.upd))])
		c.mu.Unlock()
	case wait:
		n, err = c.ep.Wait(c.buf, timeout)
		c.mu.Lock()
		c.parked = false
		c.mu.Unlock()
	default:
		n, err = c.ep.spin(c.buf, budget)
	}
	if n > 0 {
		c.handle(c.buf[:n])
	}
	if budget > 0 && err == nil && (n == 0 || now.Sub(c.yielded) >= yieldEvery || c.othersRunnable()) {
		c.yielded = now
		runtime.Gosched()
	}
	return err
}

// accountLocked counts receives just posted (upd says which had held a
// credit update) as pending credits and sends a credit update if they call
// for one. upd must not be the queue itself (c.repostUpd): the update's
// send posts the queue.
func (c *conn) accountLocked(upd []bool) {
	for _, u := range upd {
		c.w.reposted(u)
	}
	if len(upd) > 0 && c.w.needUpdate() {
		c.queueUpdateLocked()
	}
	c.flushCtrlLocked()
}

func (c *conn) queueUpdateLocked() {
	for _, m := range c.ctrl {
		if m.kind == kindCredit {
			return // a queued update will carry everything pending
		}
	}
	c.ctrl = append(c.ctrl, ctrlMsg{kind: kindCredit})
}

func (c *conn) handle(cs []Completion) {
	for i := range cs {
		cp := &cs[i]
		switch cp.ID & wrKind {
		case wrRecv:
			slot := int(cp.ID &^ wrKind)
			if cp.Err != nil {
				c.fail(cp.Err)
				return
			}
			msg := c.recv.Bytes()[slot*c.msgSize : slot*c.msgSize+cp.Len]
			h, err := parseHeader(msg)
			c.mu.Lock()
			if err == nil {
				err = c.w.receive(h.credits)
			}
			if err != nil {
				c.mu.Unlock()
				c.fail(err)
				return
			}
			if h.kind == kindCredit {
				c.repostLocked(slot, true)
				c.mu.Unlock()
				continue
			}
			c.held++
			c.refs++
			c.mu.Unlock()
			c.role.onMessage(slot, h, msg)
		case wrSend:
			if cp.Err != nil {
				c.fail(cp.Err)
				return
			}
			c.mu.Lock()
			c.reapLocked(int(cp.ID & wrSlot))
			c.mu.Unlock()
		case wrRead:
			c.role.onRead(cp.ID&^wrKind, cp.Err)
		}
	}
	c.mu.Lock()
	if c.spin > 0 {
		c.active = time.Now()
	}
	c.flushCtrlLocked()
	c.cond.Broadcast()
	c.mu.Unlock()
}

// othersRunnable reports whether goroutines of this process wait for a
// P (runtime/metrics; about 60 ns).
func (c *conn) othersRunnable() bool {
	if c.runnable == nil {
		c.runnable = []metrics.Sample{{Name: "/sched/goroutines/runnable:goroutines"}}
	}
	metrics.Read(c.runnable)
	v := c.runnable[0].Value
	return v.Kind() != metrics.KindUint64 || v.Uint64() > 0
}

// reapLocked frees send slot and every send posted before it.
func (c *conn) reapLocked(slot int) {
	for i, s := range c.inflight {
		if s == slot {
			c.freeSend = append(c.freeSend, c.inflight[:i+1]...)
			c.inflight = append(c.inflight[:0], c.inflight[i+1:]...)
			return
		}
	}
}

// releaseSlot posts receive slot again (its message is done with).
func (c *conn) releaseSlot(slot int) {
	c.mu.Lock()
	c.held--
	c.refs--
	if c.closed {
		free := c.freeable()
		c.mu.Unlock()
		if free {
			c.free()
		}
		return
	}
	c.repostLocked(slot, false)
	c.mu.Unlock()
}

// unref drops a reference taken for a message that holds no slot (a
// rendezvous request whose data is in its own region).
func (c *conn) unref() {
	c.mu.Lock()
	c.refs--
	free := c.freeable()
	c.mu.Unlock()
	if free {
		c.free()
	}
}

// repostLocked queues receive slot to be posted again: with the next
// send or poll, or now when the poller is blocked in Wait.
func (c *conn) repostLocked(slot int, update bool) {
	c.repost = append(c.repost, Span{Off: slot * c.msgSize, Len: c.msgSize, ID: wrRecv | uint64(slot)})
	c.repostUpd = append(c.repostUpd, update)
	if !c.parked {
		// The reader posts it before it polls again; a reader spinning
		// in C (PollBusy) is told to come back for it.
		if c.spin > 0 && !c.kicked {
			c.kicked = true
			c.ep.kick()
		}
		return
	}
	_, posted, err := c.ep.exchange(c.recv, c.repost, nil, nil, nil, 0)
	if err != nil {
		c.repost, c.repostUpd = c.repost[:0], c.repostUpd[:0]
		c.failLocked(err)
		return
	}
	// Swap the queue with the poller-free scratch before accounting.
	c.repostUpd, c.accounted = c.accounted[:0], c.repostUpd[:posted]
	c.repost = c.repost[:0]
	c.accountLocked(c.accounted)
}

// sendControl queues a control message and sends what the credits allow.
// It never blocks: the poller calls it.
func (c *conn) sendControl(k kind, id uint64, code uint32) {
	c.mu.Lock()
	if !c.closed {
		c.ctrl = append(c.ctrl, ctrlMsg{kind: k, id: id, code: code})
		c.flushCtrlLocked()
	}
	c.mu.Unlock()
}

func (c *conn) flushCtrlLocked() {
	for len(c.ctrl) > 0 && !c.closed && c.w.canSend(true) && len(c.freeSend) > 0 {
		m := c.ctrl[0]
		c.ctrl = c.ctrl[1:]
		if m.kind == kindCredit && c.w.pending == 0 {
			continue // a message since has carried the grant
		}
		slot := c.freeSend[len(c.freeSend)-1]
		c.freeSend = c.freeSend[:len(c.freeSend)-1]
		b := c.send.Bytes()[slot*c.msgSize:]
		h := header{kind: m.kind, id: m.id}
		n := headerSize
		if m.kind == kindError {
			h.length = errorSize
			putUint32(b[headerSize:], m.code)
			n += errorSize
		}
		c.w.take()
		if err := c.postSendLocked(slot, n, &h); err != nil {
			c.failLocked(err)
			return
		}
	}
	if len(c.ctrl) == 0 {
		c.ctrl = c.ctrl[:0:0] // drop the consumed backing array
	}
}

// sendData sends one data message made of header h and the payload parts,
// waiting for a credit and a send slot. The parts are copied into the slot
// without c.mu held.
func (c *conn) sendData(h header, parts ...[]byte) error {
	n := headerSize
	for _, p := range parts {
		n += len(p)
	}
	if n > c.msgSize {
		return ErrRange
	}
	c.mu.Lock()
	_, err := c.sendLocked(true, h, n, parts)
	return err
}

// trySendData is sendData that never waits: sent is false, and nothing
// was sent, when no credit or no send slot is free now.
func (c *conn) trySendData(h header, parts ...[]byte) (sent bool, err error) {
	n := headerSize
	for _, p := range parts {
		n += len(p)
	}
	if n > c.msgSize {
		return false, ErrRange
	}
	c.mu.Lock()
	return c.sendLocked(false, h, n, parts)
}

// sendLocked is sendData's body, entered with c.mu held (it returns with
// it released); wait says whether to wait for a credit and a slot.
func (c *conn) sendLocked(wait bool, h header, n int, parts [][]byte) (sent bool, err error) {
	if !wait && !c.closed && (!c.w.canSend(false) || len(c.freeSend) == 0) {
		c.mu.Unlock()
		return false, nil
	}
	for !c.closed && (!c.w.canSend(false) || len(c.freeSend) == 0) {
		// Credits and slots come back through the queue: someone
		// must read it while this sender waits.
		// A driver reads it already (and hands it back when it is done
		// while this caller awaits its response).
		if c.lend && c.owner == ownerNone {
			c.wakePollerLocked()
		}
		c.cond.Wait()
	}
	if c.closed {
		err := c.err
		c.mu.Unlock()
		return true, errors.Join(ErrConnLost, err)
	}
	slot := c.freeSend[len(c.freeSend)-1]
	c.freeSend = c.freeSend[:len(c.freeSend)-1]
	c.w.take()
	c.refs++
	c.mu.Unlock()

	b := c.send.Bytes()[slot*c.msgSize:]
	off := headerSize
	for _, p := range parts {
		off += copy(b[off:], p)
	}
	h.length = uint32(n - headerSize)

	c.mu.Lock()
	c.refs--
	if c.closed {
		err := c.err
		free := c.freeable()
		c.mu.Unlock()
		if free {
			c.free()
		}
		return true, errors.Join(ErrConnLost, err)
	}
	err = c.postSendLocked(slot, n, &h)
	if err != nil {
		c.failLocked(err)
		err = errors.Join(ErrConnLost, err)
	}
	c.mu.Unlock()
	return true, err
}

// postSendLocked posts the n bytes of send slot with header h (its credit
// already taken), together with the queued receives, in one cgo call: the
// receives first, so that the grant written into h may count them. The
// grant is taken at the last moment, so it carries everything re-posted
// while the payload was copied. It retries a full work queue.
func (c *conn) postSendLocked(slot, n int, h *header) error {
	for i := 0; ; i++ {
		for _, u := range c.repostUpd {
			c.w.reposted(u)
		}
		h.credits = c.w.grant()
		h.put(c.send.Bytes()[slot*c.msgSize:])
		id := wrSend | uint64(slot)
		c.unsig++
		if c.selective && c.unsig < c.sigEvery && len(c.freeSend) >= c.sigEvery {
			id |= unsignaled
		} else {
			c.unsig = 0
		}
		c.one[0] = Span{Off: slot * c.msgSize, Len: n, ID: id}
		_, posted, err := c.ep.exchange(c.recv, c.repost, c.send, c.one[:], nil, 0)
		if posted >= len(c.repost) {
			c.repost, c.repostUpd = c.repost[:0], c.repostUpd[:0]
		} else {
			return err // a receive failed to post: the connection fails
		}
		if err == nil {
			c.inflight = append(c.inflight, slot)
			if c.spin > 0 {
				c.active = time.Now() // its answer is due: keep polling
			}
			return nil
		}
		// The grant went nowhere: give it back to pending.
		c.w.pending += int(h.credits)
		c.w.granted -= uint64(h.credits)
		if !errors.Is(err, ErrQueueFull) || i == queueFullRetries {
			return err
		}
		c.mu.Unlock()
		time.Sleep(10 * time.Microsecond)
		c.mu.Lock()
		if c.closed {
			return ErrClosed
		}
	}
}

// postRead posts the RDMA READs of a rendezvous of d into r at off, in
// chunks; it returns how many it posted.
func (c *conn) postRead(r *Region, off int, d descriptor, token uint64) (int, error) {
	n := 0
	for done := uint64(0); done < d.length; done += readChunk {
		k := min(d.length-done, readChunk)
		var err error
		for i := 0; ; i++ {
			err = c.ep.PostRead(r, off+int(done), int(k), d.addr+done, d.key, wrRead|token)
			if !errors.Is(err, ErrQueueFull) || i == queueFullRetries {
				break
			}
			time.Sleep(10 * time.Microsecond)
		}
		if err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// fail closes the connection for err (once).
func (c *conn) fail(err error) {
	c.mu.Lock()
	c.failLocked(err)
	c.mu.Unlock()
}

func (c *conn) failLocked(err error) {
	if c.closed {
		return
	}
	c.closed, c.err = true, err
	c.ctrl = nil
	c.cond.Broadcast()
	select { // the poller exits
	case c.wake <- struct{}{}:
	default:
	}
	// Close wakes the poller; posted work is discarded. The role hears
	// of it on its own goroutine: it takes its own locks and may call
	// back into c.
	c.ep.Close()
	go c.role.onClose(err)
}

func (c *conn) freeable() bool {
	if c.closed && c.refs == 0 && !c.freed {
		c.freed = true
		return true
	}
	return false
}

// free closes the regions once nothing references them any more.
func (c *conn) free() {
	c.recv.Close()
	c.send.Close()
	c.role.onFree()
}

// close closes the connection from this side.
func (c *conn) close() { c.fail(ErrClosed) }

func (c *conn) stats() (held int, closed bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.held, c.closed
}

func putUint32(b []byte, v uint32) {
	_ = b[3]
	b[0], b[1], b[2], b[3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
}

// Supported reports whether this build has the transport (it has; whether
// a provider works is for OpenFabric to say).
func Supported() bool { return true }
