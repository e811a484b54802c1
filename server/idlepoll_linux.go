//go:build linux

package server

import (
	"net"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// The goroutine engine's idle poller (docs/decisions/0043-idle-
// connections.md): a keep-alive connection idle for parkAfter gives back
// its read and output buffers and ends its goroutine (with the goroutine's
// stack), and the poller, one epoll set per Server, holds it until it is
// readable, hung up, woken (Shutdown, reclaimIdle, Close) or due (its Idle
// timeout); then a new goroutine serves it from where it stopped (resume).
// The conn itself stays, in Server.conns as before, so that Shutdown and
// reclaimIdle see it. A busy connection never parks: only a read that
// waited parkAfter does, so the request path keeps its cost.

// idlePoll holds the parked connections of one Server.
type idlePoll struct {
	mu sync.Mutex
	// epfd is the epoll set, -1 while no connection is parked: the
	// poller's goroutine runs only while there is one (run).
	epfd  int
	conns map[int]*conn // by descriptor
}

// idleEvents bounds the events one epoll_wait returns.
const idleEvents = 64

// idlePollWaitMs is how long one epoll_wait blocks, in milliseconds: how
// late the poller's goroutine notices that it has nothing left to hold.
const idlePollWaitMs = 100

func newIdlePoll() *idlePoll { return &idlePoll{epfd: -1} }

// parkFD returns the descriptor of a plain TCP stream, or -1. TLS streams
// do not park: crypto/tls may hold plaintext the descriptor does not show.
func parkFD(st Stream) int {
	tc, ok := st.(*net.TCPConn)
	if !ok {
		return -1
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return -1
	}
	fd := -1
	rc.Control(func(f uintptr) { fd = int(f) })
	return fd
}

// park holds c, whose goroutine has ended (serveParked), until its
// descriptor is readable or it is woken. It reports false if c cannot be
// parked; the caller then serves it on.
func (p *idlePoll) park(c *conn) bool {
	fd := parkFD(c.st)
	if fd < 0 {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.epfd < 0 {
		epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
		if err != nil {
			return false
		}
		p.epfd = epfd
		if p.conns == nil {
			p.conns = make(map[int]*conn)
		}
		go p.run(epfd)
	}
	// One-shot: the poller hands the connection back on its first event.
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLRDHUP | unix.EPOLLONESHOT, Fd: int32(fd)}
	if unix.EpollCtl(p.epfd, unix.EPOLL_CTL_ADD, fd, &ev) != nil {
		return false
	}
	c.pfd = fd
	p.conns[fd] = c
	if c.state.Load() == stateWoken || c.srv.closing.Load() {
		// Woken while it was parking (reclaimIdle, Shutdown, Close):
		// their wake found nothing to take.
		p.take(fd, c)
		return true
	}
	if d := c.cfg.Timeouts.Idle; d > 0 {
		// The Idle timeout, which no read deadline enforces while no
		// goroutine reads.
		c.parkT = time.AfterFunc(time.Until(c.now.Add(d)), func() { p.wake(c) })
	}
	return true
}

// streamParks reports whether st may wait idle in the poller.
func streamParks(st Stream) bool {
	_, ok := st.(*net.TCPConn)
	return ok
}

// wake hands c back to a goroutine now if it is parked (Shutdown,
// reclaimIdle, Close, its idle deadline).
func (p *idlePoll) wake(c *conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if fd := c.pfd; fd >= 0 && p.conns[fd] == c {
		p.take(fd, c)
	}
}

// take removes the parked c (fd) and starts its goroutine. p.mu is held.
func (p *idlePoll) take(fd int, c *conn) {
	delete(p.conns, fd)
	unix.EpollCtl(p.epfd, unix.EPOLL_CTL_DEL, fd, nil)
	c.pfd = -1
	go c.resume()
}

// run is the poller's goroutine for the epoll set epfd; it ends, closing
// the set, once no connection is parked.
func (p *idlePoll) run(epfd int) {
	var evs [idleEvents]unix.EpollEvent
	for {
		n, err := unix.EpollWait(epfd, evs[:], idlePollWaitMs)
		p.mu.Lock()
		if err == nil {
			for i := range evs[:n] {
				fd := int(evs[i].Fd)
				if c := p.conns[fd]; c != nil {
					p.take(fd, c)
				}
			}
		}
		if len(p.conns) == 0 || err != nil && err != unix.EINTR {
			// Nothing parked (or epoll failed: wake every one).
			for fd, c := range p.conns {
				p.take(fd, c)
			}
			unix.Close(epfd)
			p.epfd = -1
			p.mu.Unlock()
			return
		}
		p.mu.Unlock()
	}
}
