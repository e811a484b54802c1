//go:build linux

package server

import (
	"errors"
	"net"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/simdedge/simdedge/server/metrics"
	"github.com/simdedge/simdedge/server/upstream"
	"golang.org/x/sys/unix"
)

const loopSupported = true

// The event-loop engine (Linux): one goroutine owns an epoll set holding the
// listening socket, an eventfd for wake-ups and every connection it serves.
// It reads what a readable connection has, parses and answers every
// complete request whose handler is inline-safe (Inliner) in one pass, and
// writes the batch of responses with one write. A connection that needs to
// block (a Go handler, the proxy, a streamed or large body,
// Expect: 100-continue) is handed, with its buffered bytes, to the goroutine
// engine for the rest of its life.
//
// Why: the goroutine engine pays, per request, a read that returns EAGAIN
// before the goroutine parks in the netpoller, the park and the wake-up, then
// the read again; about 72 % of its CPU was kernel time (issue 6). The loop
// reads once per readiness event and never reads speculatively after a
// response.
//
// Level-triggered epoll: a connection is read once per EPOLLIN (one read
// call, not a loop until EAGAIN, which edge-triggered epoll would need) and
// epoll reports it again if bytes remain. A connection whose responses hit
// EAGAIN is switched to EPOLLOUT only, so a client that does not read stops
// being read (back-pressure) until its output drains.
//
// Timeouts are a deadline per connection on the loop's clock, checked by a
// scan every tick (a quarter of the smallest timeout, at least
// minLoopTick): no timer operation per request.
//
// Blocking: the loop polls epoll without a timeout through RawSyscall and,
// when nothing is ready, parks on Go's netpoller with the epoll descriptor
// (wait), so no thread is held in a blocking system call. The goroutine is
// not locked to its thread: runtime.LockOSThread measured 1-15 % more CPU
// per request (4 interleaved rounds, 2-CPU VM, Go 1.26), as every park of a
// locked goroutine hands its P to another thread.

const (
	// loopEvents is how many readiness events one epoll_wait returns.
	loopEvents = 256
	// acceptBatch bounds the accepts per listener event, so a connect
	// storm cannot starve the connections already open.
	acceptBatch = 64
	// loopBodyMax is the largest Content-Length body the loop waits for
	// when it has not fully arrived with the head; a larger one hands the
	// connection off (its handler may stream it).
	loopBodyMax = 64 << 10
	// minLoopTick and maxLoopTick bound the deadline-scan period.
	minLoopTick = 5 * time.Millisecond
	maxLoopTick = time.Second
	// loopYield is how often a busy loop yields its P. A goroutine that
	// never reschedules is preempted by sysmon after 10 ms with a signal,
	// and each preemption puts sysmon back to polling every 20 µs: on the
	// CPU the server is pinned to, that doubled the context switches per
	// request (perf stat, 2-CPU VM, Go 1.26). A Gosched every millisecond
	// costs far less.
	loopYield = time.Millisecond
)

var errLoopListener = errors.New("server: event loop needs a kernel TCP listener with a descriptor")

// loop is one event loop and its connections. Only its goroutine touches
// it, except the atomics, wake and listenerDone.
type loop struct {
	srv *Server
	// free holds this loop's released lconns (newLconn, putLconn).
	free []*lconn
	// spare holds the conns and TLS input buffers of the loop's idle
	// connections, and parkq those to park at the end of the turn
	// (looppark_linux.go).
	spare spares
	parkq []*lconn
	// origin is what the loop's idle connections share (connpark.go):
	// that of the last connection parked, replaced when one parks with
	// another (after a reload).
	origin *connOrigin
	ln     *net.TCPListener
	laddr  net.Addr
	mlst   *metrics.Listener // its connections' counters (nil: metrics off)
	lfd    int
	epfd   int
	// epf is epfd as an *os.File in Go's netpoller: an idle loop parks
	// its goroutine until the epoll set has events (see wait).
	epf    *os.File
	eprc   syscall.RawConn
	epDL   time.Time
	pollFn func(uintptr) bool // lp.pollOnce, bound once (no allocation per wait)
	pollN  int
	pollE  error
	wfd    int  // eventfd: Shutdown, Close and hand-off endings wake the loop
	h2c    bool // the listener takes h2c (h2serve.go)
	// outer is the listener as given to ServeLoop (SetListenerPaths's
	// key).
	outer net.Listener
	// proxies: Options.LoopProxy is on, the loop proxies the requests
	// whose plan's action is a LoopProxier; ups (by descriptor) and pools
	// are its upstream connections (loopproxy_linux.go).
	proxies bool
	ups     []*lupconn
	pools   map[*upstream.Target]*lpool
	// waiters: exchanges woken from an upstream's admission queue
	// (loopqueue_linux.go).
	waiters loopWaiters
	// ring batches a turn's reads and writes (loopring_linux.go; nil:
	// read(2) and write(2)); jobs, flushq and flushq2 are its queues.
	ring    *lring
	jobs    []ringJob
	flushq  []ringJob
	flushq2 []ringJob
	doneFn  func(uint64, int32)
	ringMin int // the smallest batch worth an io_uring_enter

	conns  []*lconn // by descriptor
	nconns int      // connections the loop serves itself
	events []unix.EpollEvent
	base   time.Time
	tick   int64 // deadline-scan period, ns
	next   int64 // time of the next scan
	// yielded is when the loop last called runtime.Gosched.
	yielded int64

	// count is the loop's connections plus those handed off and still
	// open: the Limits.MaxConns slots of this Serve call.
	count atomic.Int64
	// paused: the listener is out of the epoll set (connection limit or
	// descriptor exhaustion, then until resumeAt).
	paused   atomic.Bool
	resumeAt int64
	backoff  time.Duration
	// held is a connection accepted at the limit with no idle one to
	// replace: it waits, accepted, for a slot (loopadmit_linux.go), and the
	// listener stays out of the epoll set meanwhile. reclaimAt is when to
	// look for an idle connection again; rcur is where the bounded scan
	// for one starts.
	held      heldConn
	reclaimAt int64
	rcur      int

	stopAccept   atomic.Bool // Shutdown or Close: close the listener
	abort        atomic.Bool // Close: close every connection now
	lclosed      bool
	listenerDone chan struct{}

	wakeMu sync.Mutex
	exited bool // the eventfd is closed; wake must not write to it

	// tlsOpts: the listener terminates TLS on the loop (looptls_linux.go).
	// shaking counts the connections between accept and adoption;
	// pending (their handshakes' connections) and adoptq (handshaken,
	// for the loop to take) are under wakeMu.
	// pol is the listener's policy (PROXY protocol, allow/deny;
	// loopproxyproto_linux.go), nil for none.
	pol             *ListenerPolicy
	tlsOpts         *TLSOptions
	shaking         atomic.Int64
	pending         map[*loopTLS]net.Conn
	adoptq, adoptq2 []*loopTLS
}

// ServeLoop serves kernel TCP connections accepted from l on an epoll event
// loop in the calling goroutine (see EngineLoop) until Shutdown or Close, then
// returns ErrServerClosed. Requests run on the loop when Options.Handler
// implements Inliner and says so; the others run on goroutines. l must be a
// *net.TCPListener (other listeners are served by ServeStream). It closes l.
func (s *Server) ServeLoop(l net.Listener) error { return s.serveLoop(l, nil) }

// serveLoop is ServeLoop, terminating TLS with o if it is not nil.
func (s *Server) serveLoop(l net.Listener, o *TLSOptions) error {
	outer := l
	l, pol := listenerPolicy(l) // listenpolicy.go
	tl, ok := l.(*net.TCPListener)
	if !ok {
		l = outer // the goroutine engine applies the policy in Accept
		if o != nil {
			return s.ServeStream(s.newTLSListener(l, *o))
		}
		return s.ServeStream(TCPListener(l))
	}
	lp, err := newLoop(s, tl)
	if err != nil {
		l.Close()
		return err
	}
	lp.tlsOpts = o
	lp.pol = pol
	// EnableH2C may name the listener as given (cmd/simdedge does, after
	// WithPolicy) or the kernel listener under it.
	lp.h2c = s.h2.h2cOn(outer) || s.h2.h2cOn(l)
	lp.outer = outer
	if !s.trackLoop(lp, lp.stop, lp.kill) {
		lp.exit()
		return ErrServerClosed
	}
	defer s.untrack(lp)
	s.alias(outer, lp) // StopListener(l) finds the loop
	defer s.alias(outer, nil)
	err = lp.run()
	lp.exit()
	s.active.Done()
	if err == nil || s.closing.Load() {
		if !s.closing.Load() && s.wasStopped(lp) {
			return ErrListenerStopped
		}
		return ErrServerClosed
	}
	return err
}

func newLoop(s *Server, tl *net.TCPListener) (*loop, error) {
	lp := &loop{
		srv:          s,
		ln:           tl,
		laddr:        tl.Addr(),
		mlst:         s.opts.Metrics.Listener(tl.Addr().String()),
		lfd:          -1,
		epfd:         -1,
		wfd:          -1,
		events:       make([]unix.EpollEvent, loopEvents),
		base:         time.Now(),
		listenerDone: make(chan struct{}),
	}
	lp.proxies = s.opts.LoopProxy
	// The descriptor stays owned by tl, which stays open until the loop
	// closes it (closeListener): the loop accepts on it directly.
	rc, err := tl.SyscallConn()
	if err != nil {
		return nil, err
	}
	if err := rc.Control(func(fd uintptr) { lp.lfd = int(fd) }); err != nil || lp.lfd < 0 {
		return nil, errLoopListener
	}
	lp.tick = loopTick(s.settings())
	if lp.epfd, err = unix.EpollCreate1(unix.EPOLL_CLOEXEC); err != nil {
		return nil, err
	}
	if lp.wfd, err = unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC); err != nil {
		unix.Close(lp.epfd)
		return nil, err
	}
	if err := lp.ctl(unix.EPOLL_CTL_ADD, lp.wfd, unix.EPOLLIN); err != nil {
		lp.closeFDs()
		return nil, err
	}
	if err := lp.ctl(unix.EPOLL_CTL_ADD, lp.lfd, unix.EPOLLIN); err != nil {
		lp.closeFDs()
		return nil, err
	}
	// The epoll descriptor goes into Go's netpoller (an epoll set is
	// itself pollable): an idle loop parks its goroutine like any other
	// instead of holding a thread in a blocking epoll_wait.
	if err := unix.SetNonblock(lp.epfd, true); err != nil {
		lp.closeFDs()
		return nil, err
	}
	lp.epf = os.NewFile(uintptr(lp.epfd), "epoll")
	if lp.eprc, err = lp.epf.SyscallConn(); err != nil {
		lp.closeFDs()
		return nil, err
	}
	lp.pollFn = lp.pollOnce
	lp.doneFn = lp.done
	if on, minBatch := ringSetting(); on {
		lp.ring, lp.ringMin = newRing(), minBatch
	}
	return lp, nil
}

func (lp *loop) ctl(op, fd int, events uint32) error {
	ev := unix.EpollEvent{Events: events, Fd: int32(fd)}
	return unix.EpollCtl(lp.epfd, op, fd, &ev)
}

func (lp *loop) clock() int64 { return int64(time.Since(lp.base)) }

// stop is the listener's close function for Server.closeListeners: the
// loop closes the listener itself (so no accept can run on a descriptor
// number already reused), and stop waits for that.
func (lp *loop) stop() error {
	lp.stopAccept.Store(true)
	lp.wake()
	<-lp.listenerDone
	return nil
}

// kill makes the loop close every connection and end (Close).
func (lp *loop) kill() {
	lp.abort.Store(true)
	lp.killHandshakes()
	lp.wake()
}

var wakeValue = [8]byte{1} // an eventfd counter increment of 1 (little endian)

func (lp *loop) wake() {
	lp.wakeMu.Lock()
	if !lp.exited {
		unix.Write(lp.wfd, wakeValue[:])
	}
	lp.wakeMu.Unlock()
}

// run is the loop. It returns nil once the listener is closed and every
// connection it serves has ended, or epoll's error.
func (lp *loop) run() error {
	var drain [8]byte
	for {
		if lp.abort.Load() {
			lp.closeListener()
			lp.closeAll()
			return nil
		}
		if lp.lclosed && lp.nconns == 0 && !lp.held.ok && lp.shaking.Load() == 0 {
			return nil
		}
		// Poll first without parking: under load the next events are
		// usually there. Spinning on more zero-timeout polls before
		// parking measured no better.
		n, err := rawPoll(lp.epfd, lp.events)
		if n == 0 && err == nil {
			n, err = lp.wait()
		}
		if err != nil {
			if err == unix.EINTR {
				continue
			}
			return err
		}
		now := lp.clock()
		if now-lp.yielded > int64(loopYield) {
			// See loopYield.
			lp.yielded = now
			runtime.Gosched()
		}
		if lp.ring != nil && n >= lp.ringMin {
			lp.prefetch(lp.events[:n])
		}
		for i := range lp.events[:n] {
			ev := &lp.events[i]
			switch fd := int(ev.Fd); fd {
			case lp.wfd:
				unix.Read(lp.wfd, drain[:])
				if lp.tlsOpts != nil {
					lp.adopt(now)
				}
			case lp.lfd:
				if !lp.lclosed {
					lp.accept(now)
				}
			default:
				if fd < len(lp.conns) && lp.conns[fd] != nil {
					lp.event(lp.conns[fd], ev.Events, now)
				} else if fd < len(lp.ups) && lp.ups[fd] != nil {
					lp.upEvent(lp.ups[fd], ev.Events, now)
				}
			}
		}
		if lp.stopAccept.Load() && !lp.lclosed {
			if !lp.srv.closing.Load() && !lp.paused.Load() {
				// StopListener (a reload removed the address):
				// take what the backlog holds before closing, so
				// that no connection already made is reset.
				lp.accept(now)
			}
			lp.closeListener()
			lp.next = now // close the idle connections now
		}
		if lp.paused.Load() && !lp.lclosed {
			lp.maybeResume(now)
		}
		if now >= lp.next {
			lp.scan(now)
		}
		if lp.held.ok && lp.next > lp.reclaimAt {
			lp.next = lp.reclaimAt // look for an idle connection again then
		}
		if lp.waiters.n.Load() > 0 {
			lp.runWoken(now)
		}
		if len(lp.flushq) > 0 {
			lp.flush(now)
		}
		if len(lp.parkq) > 0 {
			lp.parkIdle()
		}
	}
}

// scan closes the connections whose deadline passed and, once the server
// is closing, the idle ones.
func (lp *loop) scan(now int64) {
	closing := lp.srv.closing.Load()
	if closing && lp.held.ok {
		lp.dropHeld() // never served: as if still in the backlog
	}
	if closing && lp.shaking.Load() > 0 {
		// Handshakes have sent no request yet: Shutdown ends them, as
		// it wakes the goroutine engine's connections waiting for a
		// first request, instead of waiting for their timeout.
		lp.killHandshakes()
	}
	for _, lc := range lp.conns {
		if lc == nil {
			continue
		}
		dl := lc.rdl
		if lc.writing {
			dl = lc.wdl
		}
		if dl != 0 && now >= dl && !lc.writing && lc.body.since != 0 {
			lp.bodyTimedOut(lc, now)
			continue
		}
		// Closing: a connection accepted a moment ago may have its
		// first request on the way; it is closed on a later tick if it
		// stays silent (sparedFresh).
		if dl != 0 && now >= dl || closing && lc.idle() && !lc.sparedFresh(now) {
			lp.closeConn(lc)
			continue
		}
		if lc.ex.active && lc.ex.dl != 0 && now >= lc.ex.dl {
			lp.exTimeout(lc, now)
		}
	}
	// Timeouts may have been reconfigured: the period follows the
	// current ones (connections keep theirs, so a shorter old timeout is
	// checked up to a tick late).
	lp.tick = loopTick(lp.srv.settings())
	tick := lp.tick
	if closing {
		tick = min(tick, int64(shutdownPoll))
	}
	lp.next = now + tick
	if len(lp.pools) > 0 {
		lp.sweepPools(now)
	}
	for _, lc := range lp.conns {
		if lc != nil && lc.ex.active && lc.ex.dl != 0 && lc.ex.dl < lp.next {
			lp.next = lc.ex.dl
		}
	}
}

func (lp *loop) closeAll() {
	if lp.held.ok {
		lp.dropHeld()
	}
	for _, lc := range lp.conns {
		if lc != nil {
			lp.closeConn(lc)
		}
	}
}

func (lp *loop) closeListener() {
	if lp.lclosed {
		return
	}
	lp.lclosed = true
	lp.ctl(unix.EPOLL_CTL_DEL, lp.lfd, 0)
	lp.ln.Close()
	// The number is free now: the loop's next socket (an upstream
	// connection, an adopted TLS connection) may get it, and run must
	// not take that socket's events for the listener's.
	lp.lfd = -1
	close(lp.listenerDone)
}

// exit releases the loop's descriptors after run returned (or when it
// never ran).
func (lp *loop) exit() {
	lp.closeListener()
	lp.closeAll()
	lp.closeUps()
	if lp.ring != nil {
		lp.ring.close()
		lp.ring = nil
	}
	lp.wakeMu.Lock()
	lp.exited = true
	lp.closeFDs()
	lp.wakeMu.Unlock()
	lp.dropAdopted()
}

// wait parks the loop until the epoll set has events or the next scan is
// due. Measured against a blocking epoll_wait system call: the same CPU
// per request within noise, and the runtime keeps its thread (2-CPU VM,
// Go 1.26).
func (lp *loop) wait() (int, error) {
	if dl := lp.base.Add(time.Duration(lp.next)); !dl.Equal(lp.epDL) {
		lp.epDL = dl
		lp.epf.SetReadDeadline(dl)
	}
	lp.pollN, lp.pollE = 0, nil
	err := lp.eprc.Read(lp.pollFn)
	if err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return 0, nil
		}
		return 0, err
	}
	return lp.pollN, lp.pollE
}

// pollOnce is the RawConn.Read callback of wait: true when events (or an
// error) came, false to park until the epoll descriptor is readable.
func (lp *loop) pollOnce(uintptr) bool {
	lp.pollN, lp.pollE = rawPoll(lp.epfd, lp.events)
	return lp.pollN > 0 || lp.pollE != nil
}

func (lp *loop) closeFDs() {
	if lp.wfd >= 0 {
		unix.Close(lp.wfd)
		lp.wfd = -1
	}
	if lp.epf != nil {
		lp.epf.Close()
		lp.epf, lp.epfd = nil, -1
	}
	if lp.epfd >= 0 {
		unix.Close(lp.epfd)
		lp.epfd = -1
	}
}

// connGone frees the slot of a handed-off connection that ended; it runs
// on that connection's goroutine.
func (lp *loop) connGone() {
	lp.count.Add(-1)
	if lp.paused.Load() {
		lp.wake()
	}
}

func sockaddrTCP(sa unix.Sockaddr) net.Addr {
	switch a := sa.(type) {
	case *unix.SockaddrInet4:
		return &net.TCPAddr{IP: append(net.IP(nil), a.Addr[:]...), Port: a.Port}
	case *unix.SockaddrInet6:
		return &net.TCPAddr{IP: append(net.IP(nil), a.Addr[:]...), Port: a.Port}
	}
	return nil
}
