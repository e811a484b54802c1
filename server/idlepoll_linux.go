//go:build linux

package server

import (
	"net"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// The goroutine engine's idle poller (docs/decisions/0043-idle-
// connections.md): a keep-alive connection idle for parkAfter ends its
// goroutine (with the goroutine's stack) and gives back its conn, with the
// conn's buffers, as the loop does (looppark_linux.go); what lasts from
// request to request stays in a gparked, which the poller, one epoll set
// per Server, holds until the descriptor is readable or hung up, it is
// woken (Shutdown, reclaimIdle, Close) or due (its Idle timeout, a timer).
// Then a new goroutine takes a conn again and goes on with the same wait
// (resume). A busy connection never parks: only a read that waited
// parkAfter does, so the request path keeps its cost.

// gparked is a parked connection of the goroutine engine. Its fields are
// the poller's, under its lock, while it is in idlePoll.conns.
type gparked struct {
	pk parked
	// org is pk's connOrigin, one for each gparked (made at each park
	// anyway) where the loop shares one.
	org connOrigin
	fd  int
	// state is the connection's state word (conn.state): when its idle
	// wait began, or stateWoken once reclaimIdle chose it.
	state int64
	// now is when the connection's last request ended: the Idle timeout
	// runs from it.
	now   time.Time
	done  func(*conn)
	timer *time.Timer
}

// idlePoll holds the parked connections of one Server.
type idlePoll struct {
	mu sync.Mutex
	// epfd is the epoll set, -1 while no connection is parked: the
	// poller's goroutine runs only while there is one (run).
	epfd  int
	conns map[int]*gparked // by descriptor
}

// idleEvents bounds the events one epoll_wait returns.
const idleEvents = 64

// idlePollWaitMs is how long one epoll_wait blocks, in milliseconds: how
// late the poller's goroutine notices that it has nothing left to hold.
const idlePollWaitMs = 100

func newIdlePoll() *idlePoll { return &idlePoll{epfd: -1} }

// streamParks reports whether st may wait idle in the poller: plain
// kernel TCP. TLS streams do not park (crypto/tls may hold plaintext the
// descriptor does not show), nor PROXY, redirect or xdp streams.
func streamParks(st Stream) bool {
	_, ok := st.(*net.TCPConn)
	return ok
}

// parkFD returns the descriptor of a plain TCP stream, or -1.
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

// park takes over c, whose goroutine is ending (conn.run), until its
// descriptor is readable or it is woken; c goes back to connPool. It
// reports false, with c untouched, if c cannot be parked.
func (p *idlePoll) park(c *conn) bool {
	fd := parkFD(c.st)
	if fd < 0 {
		return false
	}
	s := c.srv
	// Out of Server.conns first: Shutdown, Close and reclaimIdle hold
	// its lock while they take the poller's, never the other way round.
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
	g := &gparked{fd: fd, state: c.state.Load(), now: c.now, done: c.done}
	g.org = c.origin()
	c.park(&g.pk, &g.org)
	c.done = nil
	c.req.release()
	c.resp.release()
	connPool.Put(c)

	p.mu.Lock()
	defer p.mu.Unlock()
	if p.epfd < 0 {
		epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
		if err != nil {
			go p.resume(g) // served on as if woken at once
			return true
		}
		p.epfd = epfd
		if p.conns == nil {
			p.conns = make(map[int]*gparked)
		}
		go p.run(epfd)
	}
	// One-shot: the poller hands the connection back on its first event.
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLRDHUP | unix.EPOLLONESHOT, Fd: int32(fd)}
	if unix.EpollCtl(p.epfd, unix.EPOLL_CTL_ADD, fd, &ev) != nil {
		go p.resume(g)
		return true
	}
	p.conns[fd] = g
	if g.state == stateWoken || s.closing.Load() {
		// Woken while it was parking (reclaimIdle, Shutdown, Close),
		// when nothing could find it.
		p.take(fd, g)
		return true
	}
	if d := g.org.cfg.Timeouts.Idle; d > 0 {
		// The Idle timeout, which no read deadline enforces while no
		// goroutine reads.
		g.timer = time.AfterFunc(time.Until(g.now.Add(d)), func() { p.wake(g) })
	}
	return true
}

// resume serves the parked connection g on this goroutine again: a conn
// from connPool takes its identity, rejoins Server.conns and goes on with
// the wait where it stopped.
func (p *idlePoll) resume(g *gparked) {
	if g.timer != nil {
		g.timer.Stop()
	}
	c := connPool.Get().(*conn)
	c.unpark(&g.pk)
	c.state.Store(g.state)
	c.now, c.done = g.now, g.done
	c.canPark, c.resumed = true, true
	s := c.srv
	s.mu.Lock()
	s.conns[c] = struct{}{}
	s.mu.Unlock()
	c.run(false)
}

// wake hands g back to a goroutine now if it is still parked (its idle
// deadline).
func (p *idlePoll) wake(g *gparked) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conns[g.fd] == g {
		p.take(g.fd, g)
	}
}

// wakeAll hands every parked connection back (Shutdown: they are idle,
// and close; Close, which closes their streams first with close).
func (p *idlePoll) wakeAll(close bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for fd, g := range p.conns {
		if close {
			g.pk.st.Close()
		}
		p.take(fd, g)
	}
}

// oldest returns the parked connection of home idle longest, and its state
// word, for reclaimIdle; nil if none.
func (p *idlePoll) oldest(home any) (*gparked, int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var best *gparked
	for _, g := range p.conns {
		if g.org.home == home && waiting(g.state) && (best == nil || g.state < best.state) {
			best = g
		}
	}
	if best == nil {
		return nil, 0
	}
	return best, best.state
}

// reclaim marks g woken and hands it back, if it is still parked with the
// state word st (reclaimIdle's choice); its goroutine then closes it.
func (p *idlePoll) reclaim(g *gparked, st int64) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conns[g.fd] != g || g.state != st {
		return false
	}
	g.state = stateWoken
	p.take(g.fd, g)
	return true
}

// take removes the parked g (fd) and starts its goroutine. p.mu is held.
func (p *idlePoll) take(fd int, g *gparked) {
	delete(p.conns, fd)
	unix.EpollCtl(p.epfd, unix.EPOLL_CTL_DEL, fd, nil)
	go p.resume(g)
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
				if g := p.conns[fd]; g != nil {
					p.take(fd, g)
				}
			}
		}
		if len(p.conns) == 0 || err != nil && err != unix.EINTR {
			// Nothing parked (or epoll failed: every one goes back).
			for fd, g := range p.conns {
				p.take(fd, g)
			}
			unix.Close(epfd)
			p.epfd = -1
			p.mu.Unlock()
			return
		}
		p.mu.Unlock()
	}
}
