//go:build linux

package server

import (
	"net/netip"
	"time"

	"github.com/simdedge/simdedge/server/metrics"
	"golang.org/x/sys/unix"
)

// The event loop's side of admission (admit.go) and of lingering close
// (linger.go).

// heldConn is a connection accepted while the loop was at its limit with
// nothing idle to replace.
type heldConn struct {
	ok      bool
	fd      int
	sa      unix.Sockaddr
	ip      netip.Addr
	counted bool
}

// loopTick is the deadline-scan period for cfg's timeouts: a quarter of the
// smallest, within [minLoopTick, maxLoopTick].
func loopTick(cfg *settings) int64 {
	t := &cfg.Timeouts
	tick := maxLoopTick
	for _, d := range []time.Duration{t.ReadHeader, t.Idle, t.Write, t.BodyRateWindow} {
		if d > 0 && d/4 < tick {
			tick = d / 4
		}
	}
	return int64(max(tick, minLoopTick))
}

// accept takes the connections waiting in the backlog, up to acceptBatch.
// At the connection limit it replaces an idle connection, or holds the new
// one and stops accepting until a slot frees.
func (lp *loop) accept(now int64) {
	for range acceptBatch {
		fd, sa, err := unix.Accept4(lp.lfd, unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC)
		if err != nil {
			switch err {
			case unix.EAGAIN, unix.EINTR, unix.ECONNABORTED:
				if err == unix.EAGAIN {
					return
				}
				continue
			}
			// EMFILE and friends: the backlog stays readable, so
			// take the listener out of the set for a while (as
			// ServeStream sleeps) instead of spinning.
			lp.backoff = min(max(2*lp.backoff, 5*time.Millisecond), acceptBackoff)
			lp.srv.opts.Logger.Warn("accept failed; retrying", "err", err, "delay", lp.backoff)
			lp.pause(now + int64(lp.backoff))
			return
		}
		lp.backoff = 0
		h := heldConn{ok: true, fd: fd, sa: sa}
		h.ip, h.counted = sockaddrKey(sa)
		if lp.pol != nil && !lp.admitPolicy(&h) {
			unix.Close(fd) // refused by the listener's rules
			continue
		}
		if h.counted && !lp.srv.ips.acquire(h.ip, lp.srv.settings().Limits.MaxConnsPerIP) {
			lp.mlst.Refused(0, metrics.RefusedPerIP)
			// Over its address's share: refused before it costs
			// anything more.
			unix.Close(fd)
			continue
		}
		if !lp.slotFor(now) {
			lp.held = h
			lp.reclaimAt = now + int64(reclaimRetry)
			lp.pause(0)
			return
		}
		lp.add(h, now)
	}
}

// slotFor reports whether a new connection may be added now: below
// MaxConns, or after closing an idle connection of this loop (on the loop,
// or handed off to a goroutine).
func (lp *loop) slotFor(now int64) bool {
	m := int64(lp.srv.settings().Limits.MaxConns)
	if m <= 0 || lp.count.Load() < m {
		return true
	}
	if lc := lp.idlest(now); lc != nil {
		lp.closeConn(lc)
		return true
	}
	// A handed-off connection's goroutine gives its slot back moments
	// after it is woken; the count is one over until then.
	return lp.srv.reclaimIdle(lp)
}

// idlest returns, among at most reclaimScan of the loop's connections from
// a rotating start, the one idle longest (see reclaimIdle), or nil.
func (lp *loop) idlest(now int64) *lconn {
	n := len(lp.conns)
	if n == 0 {
		return nil
	}
	var best *lconn
	var bestSince int64
	for i := 0; i < min(n, reclaimScan); i++ {
		lp.rcur++
		if lp.rcur >= n {
			lp.rcur = 0
		}
		lc := lp.conns[lp.rcur]
		if lc == nil || lc.lingering || lc.inHead || !lc.idle() {
			continue
		}
		since, ok := lc.idleSince()
		if !ok || lc.sparedFresh(now) {
			continue
		}
		if best == nil || since < bestSince {
			best, bestSince = lc, since
		}
	}
	return best
}

// idleSince is when an idle connection's wait began, on the loop clock,
// derived from its read deadline (set to the start of the wait plus Idle,
// or for a new connection plus ReadHeader) so that no field is written
// per request for it. ok is false when the wait has no deadline.
func (lc *lconn) idleSince() (since int64, ok bool) {
	var cfg *settings
	if lc.parked {
		cfg = lc.pk.o.cfg // pk.o is nil while the connection has a conn
	} else {
		cfg = lc.c.cfg
	}
	d := cfg.Timeouts.Idle
	if !lc.established {
		d = cfg.Timeouts.ReadHeader
	}
	if lc.rdl == 0 || d <= 0 {
		return 0, false
	}
	return lc.rdl - int64(d), true
}

// sparedFresh is sparedFresh (admit.go) for a loop connection: it has
// waited less than reclaimFreshAfter for its first request.
func (lc *lconn) sparedFresh(now int64) bool {
	since, ok := lc.idleSince()
	return ok && !lc.established && now-since < int64(reclaimFreshAfter)
}

// pause takes the listener out of the epoll set until resumeAt (0: until
// the held connection has a slot).
func (lp *loop) pause(resumeAt int64) {
	if !lp.paused.Load() {
		lp.ctl(unix.EPOLL_CTL_DEL, lp.lfd, 0)
		lp.paused.Store(true)
	}
	lp.resumeAt = resumeAt
}

func (lp *loop) maybeResume(now int64) {
	if lp.resumeAt != 0 && now < lp.resumeAt {
		return
	}
	if lp.held.ok {
		m := int64(lp.srv.settings().Limits.MaxConns)
		if m > 0 && lp.count.Load() >= m {
			if now < lp.reclaimAt {
				return
			}
			lp.reclaimAt = now + int64(reclaimRetry)
			if !lp.slotFor(now) {
				return
			}
		}
		h := lp.held
		lp.held = heldConn{}
		lp.add(h, now)
	}
	lp.resumeAt = 0
	lp.paused.Store(false)
	lp.ctl(unix.EPOLL_CTL_ADD, lp.lfd, unix.EPOLLIN)
}

// dropHeld closes the held connection unserved (Shutdown, Close).
func (lp *loop) dropHeld() {
	unix.Close(lp.held.fd)
	if lp.held.counted {
		lp.srv.ips.release(lp.held.ip)
	}
	lp.held = heldConn{}
}

func sockaddrKey(sa unix.Sockaddr) (netip.Addr, bool) {
	switch a := sa.(type) {
	case *unix.SockaddrInet4:
		return netip.AddrFrom4(a.Addr), true
	case *unix.SockaddrInet6:
		return clientPrefix(netip.AddrFrom16(a.Addr)), true
	}
	return netip.Addr{}, false
}

// finish closes a connection whose last response is written, lingering
// first when the client may still be sending (linger.go).
func (lp *loop) finish(lc *lconn, now int64) {
	lp.tlsBye(lc)
	if !lc.c.lingerWanted() || unix.Shutdown(lc.fd, unix.SHUT_WR) != nil {
		lp.closeConn(lc)
		return
	}
	c := lc.c
	poison(c.rbuf[:c.w])
	c.r, c.w = 0, 0
	lc.lingering, lc.closeAfter = true, false
	lc.lingerEnd = now + int64(lingerTime)
	lc.lingerLeft = lingerBytes
	lc.rdl = min(lc.lingerEnd, now+int64(lingerQuiet))
	if lc.writing || lc.inOff {
		lc.writing, lc.inOff, lc.wdl = false, false, 0
		lp.ctl(unix.EPOLL_CTL_MOD, lc.fd, unix.EPOLLIN)
	}
}

// lingered discards n bytes read from a lingering connection.
func (lp *loop) lingered(lc *lconn, n int, now int64) {
	lc.lingerLeft -= n
	if lc.lingerLeft <= 0 {
		lp.closeConn(lc)
		return
	}
	lc.rdl = min(lc.lingerEnd, now+int64(lingerQuiet))
}
