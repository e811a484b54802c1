//go:build rdma && cgo

package rdma

import (
	"errors"
	"runtime"
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
)

const (
	// spinPolls is how many empty polls the poller makes before it
	// blocks in Wait: about 20-40 µs on this machine, enough to catch the
	// next message of a busy connection without a wake-up.
	spinPolls = 256
	// minNap and maxNap bound the poller's sleeps once spinning found
	// nothing: an idle connection costs one poll per maxNap, and a request
	// on a connection idle for long waits up to maxNap more.
	minNap = 20 * time.Microsecond
	maxNap = time.Millisecond
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
}

type ctrlMsg struct {
	kind kind
	id   uint64
	code uint32
}

// newConn registers the slots, posts every receive and starts the poller.
// On error the endpoint is closed.
func newConn(f *Fabric, ep *Endpoint, nrecv, nsend, msgSize int, w window) (*conn, error) {
	c := &conn{ep: ep, msgSize: msgSize, nrecv: nrecv, w: w, refs: 1}
	c.cond.L = &c.mu
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

// poll is the connection's poller. It busy-polls (yielding between polls)
// for spinPolls empty polls, then sleeps with a backoff from minNap to
// maxNap between polls.
//
// It does not block in Endpoint.Wait, measured: a goroutine blocked in a
// cgo call keeps its P until sysmon retakes it, and sysmon, backing off
// when the program is idle, takes up to 10 ms to do so. With two Ps and a
// poller blocked on each side of a connection, the handler goroutine a
// request wakes waited for sysmon: 1.9 ms median round trip on the tcp
// provider instead of tens of µs. time.Sleep gives the P back at once.
func (c *conn) poll() {
	buf := make([]Completion, 64)
	idle := 0
	nap := minNap
	for {
		n, err := c.ep.Poll(buf)
		if n == 0 && err == nil {
			if idle < spinPolls {
				idle++
				runtime.Gosched()
				continue
			}
			time.Sleep(nap)
			nap = min(2*nap, maxNap)
			continue
		}
		if n > 0 {
			idle, nap = 0, minNap
			c.handle(buf[:n])
		}
		if err != nil {
			c.fail(err)
			break
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
			c.freeSend = append(c.freeSend, int(cp.ID&^wrKind))
			c.mu.Unlock()
		case wrRead:
			c.role.onRead(cp.ID&^wrKind, cp.Err)
		}
	}
	c.mu.Lock()
	c.flushCtrlLocked()
	c.cond.Broadcast()
	c.mu.Unlock()
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

func (c *conn) repostLocked(slot int, update bool) {
	if err := c.ep.PostRecv(c.recv, slot*c.msgSize, c.msgSize, wrRecv|uint64(slot)); err != nil {
		c.failLocked(err)
		return
	}
	c.w.reposted(update)
	if c.w.needUpdate() {
		for _, m := range c.ctrl {
			if m.kind == kindCredit {
				return // a queued update will carry everything pending
			}
		}
		c.ctrl = append(c.ctrl, ctrlMsg{kind: kindCredit})
	}
	c.flushCtrlLocked()
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
		h := header{kind: m.kind, id: m.id, credits: c.w.spend()}
		n := headerSize
		if m.kind == kindError {
			h.length = errorSize
			putUint32(b[headerSize:], m.code)
			n += errorSize
		}
		h.put(b)
		if err := c.postSend(slot, n); err != nil {
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
	for !c.closed && (!c.w.canSend(false) || len(c.freeSend) == 0) {
		c.cond.Wait()
	}
	if c.closed {
		err := c.err
		c.mu.Unlock()
		return errors.Join(ErrConnLost, err)
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
		return errors.Join(ErrConnLost, err)
	}
	// The grant is taken at the last moment, so it carries everything
	// re-posted while the payload was copied.
	h.credits = c.w.grant()
	h.put(b)
	err := c.postSend(slot, n)
	if err != nil {
		c.failLocked(err)
		err = errors.Join(ErrConnLost, err)
	}
	c.mu.Unlock()
	return err
}

// postSend posts send slot with c.mu held, retrying a full work queue.
func (c *conn) postSend(slot, n int) error {
	for i := 0; ; i++ {
		err := c.ep.PostSend(c.send, slot*c.msgSize, n, wrSend|uint64(slot))
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
