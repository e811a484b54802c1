//go:build rdma && cgo

package rdma

import (
	"errors"
	"fmt"
	"net"
	"time"
)

// Client sends requests over one connection, pipelined up to the server's
// credit window: RoundTrip blocks while the window is full, nothing is
// dropped. It is safe for concurrent use.
type Client struct {
	f *Fabric
	c *conn

	// Guarded by c.mu.
	nextID    uint64
	calls     map[uint64]*call
	rdvs      map[uint64]*Region // request rendezvous regions until done
	reads     map[uint64]*clientRead
	nextToken uint64
	closeErr  error
	freed     chan struct{}
	// spare are finished calls kept for reuse (their channel, timer):
	// RoundTrip allocates nothing in steady state.
	spare []*call
	// inPart counts part callbacks running (Close must not wait for
	// the buffers they hold).
	inPart int
	// noDone, set by tests only, makes the client keep its "done" for a
	// rendezvous response part it read (a misbehaving client).
	noDone bool
}

// call is one RoundTrip waiting for its response.
type call struct {
	id    uint64
	ch    chan item
	timer *time.Timer
	// awaiting: counted in c.awaiting (its last piece is not in ch yet).
	// Guarded by c.mu.
	awaiting bool
}

// item is what the poller hands a waiting call: a message in a receive
// slot, the end of a read, or the end of the connection.
type item struct {
	h    header
	slot int
	msg  []byte
	read bool
	err  error
}

type clientRead struct {
	cl      *call
	pending int
	err     error
}

// Dial connects to a MessageListener at addr ("127.0.0.1:7471").
func Dial(addr string, o DialOptions) (*Client, error) {
	if err := checkWindow(&o.Provider, &o.Credits, &o.MessageSize); err != nil {
		return nil, err
	}
	spin, err := checkPoll(o.Poll, o.Spin)
	if err != nil {
		return nil, err
	}
	if o.Timeout == 0 {
		o.Timeout = 5 * time.Second
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("%w: %q is not host:port", ErrAddr, safeAddr(addr))
	}
	f, err := OpenFabric(Options{Provider: o.Provider, Node: localNode(host, &o), CQSize: cqSize(o.Credits), pollFD: o.Poll == PollBusy})
	if err != nil {
		return nil, err
	}
	ep, err := f.Dial(addr, o.Timeout)
	if err != nil {
		f.Close()
		return nil, err
	}
	c, err := newConn(f, ep, o.Credits, o.Credits+2, o.MessageSize, newClientWindow(o.Credits), spin)
	if err != nil {
		f.Close()
		return nil, err
	}
	cl := &Client{f: f, c: c, calls: map[uint64]*call{}, rdvs: map[uint64]*Region{},
		reads: map[uint64]*clientRead{}, freed: make(chan struct{})}
	c.role, c.lend = cl, true
	c.start()
	// The hello: grant every posted buffer, using the one buffer the
	// server promises for it.
	c.sendControl(kindCredit, 0, 0)
	return cl, nil
}

func (cl *Client) onMessage(slot int, h header, msg []byte) {
	c := cl.c
	switch h.kind {
	case kindResponse, kindContinuation, kindAdvert, kindError:
		if h.flags&flagEnvelope != 0 { // responses are HTTP/1.1
			c.releaseSlot(slot)
			c.fail(protoErr(ErrFlags))
			return
		}
		c.mu.Lock()
		k := cl.calls[h.id]
		if k != nil {
			// Cannot block: the channel has room for every receive
			// slot, a read and the close.
			k.ch <- item{h: h, slot: slot, msg: msg}
			if h.kind == kindResponse || h.kind == kindError {
				cl.doneAwaitingLocked(k)
			}
		}
		c.mu.Unlock()
		if k == nil {
			// The caller gave up: drop the part, and free the
			// server's advert.
			c.releaseSlot(slot)
			if h.kind == kindAdvert {
				c.sendControl(kindDone, h.id, 0)
			}
		}
	case kindDone:
		c.mu.Lock()
		r := cl.rdvs[h.id]
		delete(cl.rdvs, h.id)
		c.mu.Unlock()
		if r != nil {
			r.Close()
		}
		c.releaseSlot(slot)
	default: // requests flow the other way
		c.releaseSlot(slot)
		c.fail(protoErr(ErrKind))
	}
}

func (cl *Client) onRead(token uint64, err error) {
	c := cl.c
	c.mu.Lock()
	defer c.mu.Unlock()
	rd := cl.reads[token]
	if rd == nil {
		return
	}
	rd.pending--
	if err != nil && rd.err == nil {
		rd.err = err
	}
	if rd.pending == 0 {
		delete(cl.reads, token)
		if cl.calls[rd.cl.id] == rd.cl {
			rd.cl.ch <- item{read: true, err: rd.err}
		}
	}
}

// doneAwaitingLocked: k's last piece is in its channel.
func (cl *Client) doneAwaitingLocked(k *call) {
	if k.awaiting {
		k.awaiting = false
		cl.c.awaiting--
	}
}

func (cl *Client) onClose(err error) {
	c := cl.c
	c.mu.Lock()
	cl.closeErr = err
	for _, k := range cl.calls {
		k.ch <- item{err: err}
	}
	rdvs := cl.rdvs
	cl.rdvs = map[uint64]*Region{}
	c.mu.Unlock()
	for _, r := range rdvs {
		r.Close() // the endpoint is closed: the server reads no more
	}
}

func (cl *Client) onFree() {
	cl.f.Close()
	close(cl.freed)
}

// RoundTrip sends req, a whole request, and calls part with each piece of
// the response in order; more reports whether pieces follow. A piece is a
// view of a registered receive buffer (or of a region the piece was read
// into), valid only during the call. timeout bounds the wait for each
// piece; 0 means none. RoundTrip implements proxy.MessageTarget's method.
func (cl *Client) RoundTrip(req []byte, timeout time.Duration, part func(b []byte, more bool) error) error {
	return cl.roundTrip(req, 0, timeout, part)
}

// RoundTripEnvelope is RoundTrip for a request written as a FlatBuffers
// request envelope (parse/json/envelope's Builder) instead of HTTP/1.1
// bytes: the message is flagged so that the server reads it with
// envelope.Read, in place in its receive buffer, and serves it through the
// same router and handlers. The server checks the envelope as strictly as
// a request on the wire; a malformed one is answered 400. The response is
// HTTP/1.1, as for RoundTrip.
func (cl *Client) RoundTripEnvelope(env []byte, timeout time.Duration, part func(b []byte, more bool) error) error {
	return cl.roundTrip(env, flagEnvelope, timeout, part)
}

func (cl *Client) roundTrip(req []byte, flags uint16, timeout time.Duration, part func(b []byte, more bool) error) error {
	c := cl.c
	c.mu.Lock()
	if c.closed {
		err := c.err
		c.mu.Unlock()
		return errors.Join(ErrConnLost, err)
	}
	var k *call
	if n := len(cl.spare); n > 0 {
		k = cl.spare[n-1]
		cl.spare = cl.spare[:n-1]
	} else {
		k = &call{ch: make(chan item, c.nrecv+2)}
	}
	cl.nextID++
	k.id = cl.nextID
	cl.calls[k.id] = k
	k.awaiting = true
	c.awaiting++
	c.mu.Unlock()
	defer cl.finish(k)

	if err := cl.send(k.id, flags, req); err != nil {
		return err
	}
	var expired <-chan time.Time
	if timeout > 0 {
		if k.timer == nil {
			k.timer = time.NewTimer(timeout)
		} else {
			k.timer.Reset(timeout)
		}
		expired = k.timer.C
	}
	for {
		it, err := cl.next(k, timeout, expired)
		if err != nil {
			return err
		}
		if k.timer != nil && expired != nil {
			k.timer.Reset(timeout)
		}
		if it.err != nil || it.read {
			return errors.Join(ErrConnLost, it.err)
		}
		switch it.h.kind {
		case kindResponse, kindContinuation:
			last := it.h.kind == kindResponse
			err := cl.callPart(part, it.msg[headerSize:], !last)
			c.releaseSlot(it.slot)
			if err != nil || last {
				return err
			}
		case kindError:
			err := errorOf(it.msg)
			c.releaseSlot(it.slot)
			return err
		case kindAdvert:
			more, err := cl.readPart(k, it, timeout, expired, part)
			if err != nil || !more {
				return err
			}
		}
	}
}

// next returns k's next item: from its channel, and when nobody reads
// the queue (it is lent, ownerNone), k reads it itself until the item is
// in. It hands the queue on before returning, so that a part callback
// that takes its time never holds up other calls. A timeout is
// TimeoutError.
func (cl *Client) next(k *call, timeout time.Duration, expired <-chan time.Time) (item, error) {
	c := cl.c
	c.mu.Lock()
	if c.owner == ownerNone && !c.closed {
		c.owner, c.driver = ownerCall, k
		c.refs++ // the regions stay while the driver reads the queue
	}
	c.mu.Unlock()
	defer cl.undrive(k)
	for drove := false; ; drove = true {
		select {
		case it := <-k.ch:
			if drove {
				c.mu.Lock()
				c.driven++
				c.mu.Unlock()
			}
			return it, nil
		case <-expired:
			return item{}, TimeoutError{}
		default:
		}
		c.mu.Lock()
		driving := c.owner == ownerCall && c.driver == k && !c.closed
		c.mu.Unlock()
		if !driving {
			select {
			case it := <-k.ch:
				return it, nil
			case <-expired:
				return item{}, TimeoutError{}
			}
		}
		if err := c.step(timeout); err != nil && !errors.Is(err, ErrTimeout) {
			// The connection fails: onClose hands every call its end.
			c.fail(err)
		}
	}
}

// undrive hands the queue on if k drives it: to the poller when other
// calls await pieces (or the connection is closed), else to the next
// call (ownerNone).
func (cl *Client) undrive(k *call) {
	c := cl.c
	c.mu.Lock()
	free := false
	if c.owner == ownerCall && c.driver == k {
		if c.awaiting > 0 || c.closed {
			c.wakePollerLocked()
		} else {
			c.owner, c.driver = ownerNone, nil
		}
		c.refs--
		free = c.freeable()
	}
	c.mu.Unlock()
	if free {
		c.free()
	}
}

// send sends req inline, or advertises it when it does not fit a message;
// flags is 0 or flagEnvelope.
func (cl *Client) send(id uint64, flags uint16, req []byte) error {
	c := cl.c
	if headerSize+len(req) <= c.msgSize {
		return c.sendData(header{kind: kindRequest, flags: flags, id: id}, req)
	}
	inline := min(len(req), c.msgSize-headerSize-descriptorSize)
	rest := req[inline:]
	r, err := cl.f.Register(len(rest))
	if err != nil {
		return err
	}
	copy(r.Bytes(), rest)
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		r.Close()
		return ErrConnLost
	}
	cl.rdvs[id] = r
	c.mu.Unlock()
	var desc [descriptorSize]byte
	(&descriptor{addr: r.Addr(0), length: uint64(len(rest)), key: r.Key()}).put(desc[:])
	if err := c.sendData(header{kind: kindAdvert, flags: flags, id: id}, desc[:], req[:inline]); err != nil {
		c.mu.Lock()
		if cl.rdvs[id] == r {
			delete(cl.rdvs, id)
			c.mu.Unlock()
			r.Close()
		} else {
			c.mu.Unlock() // onClose took it
		}
		return err
	}
	return nil
}

// readPart reads a response part the server advertised, hands it to part
// and tells the server it is done.
func (cl *Client) readPart(k *call, it item, timeout time.Duration, expired <-chan time.Time, part func([]byte, bool) error) (bool, error) {
	c := cl.c
	d, _ := parseDescriptor(it.msg)
	more := it.h.flags&flagMore != 0
	c.releaseSlot(it.slot)
	if d.length > uint64(maxInt) {
		c.sendControl(kindError, k.id, errCodeTooLarge)
		return false, ErrTooLarge
	}
	r, err := cl.f.Register(int(d.length))
	if err != nil {
		c.sendControl(kindError, k.id, errCodeRendezvous)
		return false, err
	}
	defer r.Close()
	c.mu.Lock()
	cl.nextToken++
	token := cl.nextToken
	rd := &clientRead{cl: k}
	cl.reads[token] = rd
	c.mu.Unlock()
	n, perr := c.postRead(r, 0, d, token)
	c.mu.Lock()
	rd.pending += n
	if perr != nil && rd.err == nil {
		rd.err = perr
	}
	if rd.pending == 0 {
		delete(cl.reads, token)
		k.ch <- item{read: true, err: rd.err}
	}
	c.mu.Unlock()
	// Wait for the read; response messages cannot overtake it (the server
	// sends nothing more for this request before the done).
	got, err := cl.next(k, timeout, expired)
	if err != nil {
		// The endpoint may still write r: close the connection (which
		// closes the endpoint before returning) before the deferred
		// r.Close.
		c.close()
		return false, err
	}
	if !got.read {
		if got.err != nil {
			return false, errors.Join(ErrConnLost, got.err)
		}
		c.close()
		return false, protoErr(ErrKind)
	}
	if got.err != nil {
		c.sendControl(kindError, k.id, errCodeRendezvous)
		return false, errors.Join(ErrRendezvousFail, got.err)
	}
	if !cl.noDone {
		c.sendControl(kindDone, k.id, 0)
	}
	return more, cl.callPart(part, r.Bytes()[:d.length], more)
}

// callPart runs a part callback, counted so that a Close made from inside
// it does not wait for the buffer the callback is reading.
func (cl *Client) callPart(part func([]byte, bool) error, b []byte, more bool) error {
	c := cl.c
	c.mu.Lock()
	cl.inPart++
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		cl.inPart--
		c.mu.Unlock()
	}()
	return part(b, more)
}

// finish forgets k, returns whatever the poller still handed it and keeps
// it for reuse.
func (cl *Client) finish(k *call) {
	c := cl.c
	c.mu.Lock()
	delete(cl.calls, k.id)
	cl.doneAwaitingLocked(k)
	c.mu.Unlock()
	if k.timer != nil {
		k.timer.Stop()
	}
	// No one sends to k.ch any more: the poller does so only under c.mu
	// for calls in cl.calls.
	for {
		select {
		case it := <-k.ch:
			if it.msg != nil {
				c.releaseSlot(it.slot)
				if it.h.kind == kindAdvert {
					c.sendControl(kindDone, k.id, 0)
				}
			}
			continue
		default:
		}
		break
	}
	c.mu.Lock()
	if len(cl.spare) < c.nrecv {
		cl.spare = append(cl.spare, k)
	}
	c.mu.Unlock()
}

// Close closes the connection; RoundTrips in flight fail with ErrConnLost.
// It returns once the connection's buffers are freed, or, when a part
// callback is running (Close may be called from inside one), at once: the
// buffers are then freed when the callbacks return.
func (cl *Client) Close() error {
	cl.c.close()
	c := cl.c
	c.mu.Lock()
	inPart := cl.inPart
	c.mu.Unlock()
	if inPart == 0 {
		<-cl.freed
	}
	return nil
}

// ClientStats counts a client's buffers in use.
type ClientStats struct {
	Held     int  // receive slots held by response parts being handed over
	InFlight int  // RoundTrips waiting for their response
	Closed   bool // the connection is closed
}

// Stats returns the client's counts.
func (cl *Client) Stats() ClientStats {
	c := cl.c
	c.mu.Lock()
	defer c.mu.Unlock()
	return ClientStats{Held: c.held, InFlight: len(cl.calls), Closed: c.closed}
}

const maxInt = int(^uint(0) >> 1)
