//go:build linux

package server

import (
	"net/netip"
	"os"

	phttp "github.com/simdedge/simdedge/parse/http"
	"github.com/simdedge/simdedge/server/upstream"
	"golang.org/x/sys/unix"
)

// The loop proxy's upstream connections (loopproxy_linux.go): kept per
// loop and per target (lpool, a LIFO stack of idle connections,
// registered for EPOLLIN while idle so that an upstream closing one is
// noticed without a system call per request), dialled without blocking,
// swept when idle too long, dropped when their target went down.

// lpool holds the idle upstream connections of one target on one loop.
type lpool struct {
	// key is the policy's target: it outlives reloads that keep its
	// address, and says whether its connections may be reused
	// (Reusable: not ejected, failing checks or retired).
	key     *upstream.Target
	sa      unix.Sockaddr
	family  int
	connect int64 // timeouts, ns
	header  int64
	idleTO  int64
	maxIdle int
	idle    []*lupconn
	// downs is key.Downs() when the idle connections were pooled: if
	// it moved, the target went down since and they are not reused.
	downs uint64
	// open counts the pool's connections, idle or in an exchange: a
	// pool is forgotten only when it has none.
	open int
}

// lupconn is one non-blocking upstream connection of a loop.
type lupconn struct {
	fd   int
	pool *lpool
	buf  []byte // response bytes: buf[r:w] unconsumed
	r, w int
	out  []byte // the request being sent: out[wpos:] is left
	wpos int
	// lc is the client connection whose exchange uses it; nil while
	// pooled.
	lc *lconn
	// fresh: connected for this exchange. connecting: waits for the
	// connect to complete; outReg: registered for EPOLLOUT (connecting,
	// or the request waits to be written); paused: registered for
	// nothing (back-pressure).
	fresh, connecting, outReg, paused bool
	idleSince                         int64
	// queued: in the loop's flushq (loopring_linux.go); rd: a read the
	// ring did for the current event.
	queued bool
	rd     ringResult
	resp   phttp.Response
	ld     phttp.LengthDecoder
	cd     phttp.ChunkedDecoder
}

// poolFor returns the loop's pool of connections to key, made on first
// use (the target's address is parsed then: the proxy lets the loop drive
// only upstreams whose targets are IP addresses).
func (lp *loop) poolFor(key *upstream.Target, to *LoopTimeouts) (*lpool, bool) {
	if pl := lp.pools[key]; pl != nil {
		return pl, true
	}
	addr, err := netip.ParseAddrPort(key.Address())
	if err != nil {
		return nil, false
	}
	pl := &lpool{key: key}
	a := addr.Addr().Unmap()
	switch {
	case a.Is4():
		pl.sa, pl.family = &unix.SockaddrInet4{Port: int(addr.Port()), Addr: a.As4()}, unix.AF_INET
	case a.Is6():
		pl.sa, pl.family = &unix.SockaddrInet6{Port: int(addr.Port()), Addr: a.As16()}, unix.AF_INET6
	default:
		return nil, false
	}
	pl.connect, pl.header, pl.idleTO, pl.maxIdle = int64(to.Connect), int64(to.Header), int64(to.Idle), to.MaxIdle
	if lp.pools == nil {
		lp.pools = make(map[*upstream.Target]*lpool)
	}
	lp.pools[key] = pl
	return pl, true
}

// upGet returns an idle pooled connection or a new one (connecting);
// fresh: a new one.
func (lp *loop) upGet(pl *lpool, now int64, fresh bool) (*lupconn, error) {
	if len(pl.idle) > 0 && (!pl.key.Reusable() || pl.key.Downs() != pl.downs) {
		// Ejected, failing checks or retired since they were pooled
		// (perhaps back by now): the connections are not reused.
		lp.closeIdle(pl)
	}
	for n := len(pl.idle); n > 0 && !fresh; n = len(pl.idle) {
		u := pl.idle[n-1]
		pl.idle[n-1] = nil
		pl.idle = pl.idle[:n-1]
		if pl.idleTO > 0 && now-u.idleSince > pl.idleTO {
			lp.closeUp(u)
			continue
		}
		u.fresh = false
		return u, nil
	}
	fd, err := unix.Socket(pl.family, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, os.NewSyscallError("socket", err)
	}
	unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	err = unix.Connect(fd, pl.sa)
	connecting := err == unix.EINPROGRESS
	if err != nil && !connecting {
		unix.Close(fd)
		return nil, os.NewSyscallError("connect", err)
	}
	ev := uint32(unix.EPOLLIN)
	if connecting {
		ev = unix.EPOLLOUT
	}
	if err := lp.ctl(unix.EPOLL_CTL_ADD, fd, ev); err != nil {
		unix.Close(fd)
		return nil, err
	}
	u := &lupconn{fd: fd, pool: pl, buf: make([]byte, upReadBuf), fresh: true, connecting: connecting, outReg: connecting}
	pl.open++
	for fd >= len(lp.ups) {
		lp.ups = append(lp.ups, make([]*lupconn, len(lp.ups)+64)...)
	}
	lp.ups[fd] = u
	return u, nil
}

func (lp *loop) putUp(u *lupconn, now int64) {
	pl := u.pool
	if len(pl.idle) >= pl.maxIdle {
		lp.closeUp(u)
		return
	}
	u.r, u.w, u.wpos = 0, 0, 0
	u.rd, u.queued = ringResult{}, false // none left by the exchange; cleared for certain
	u.out = u.out[:0]
	u.idleSince = now
	if u.paused {
		u.paused = false
		lp.ctl(unix.EPOLL_CTL_MOD, u.fd, unix.EPOLLIN)
	}
	if cap(u.buf) > maxPooledBuf {
		u.buf = make([]byte, upReadBuf)
	}
	if len(pl.idle) == 0 {
		pl.downs = pl.key.Downs()
	}
	pl.idle = append(pl.idle, u)
}

// dropIdle closes a pooled connection the upstream closed.
func (lp *loop) dropIdle(u *lupconn) {
	pl := u.pool
	for i, x := range pl.idle {
		if x == u {
			pl.idle = append(pl.idle[:i], pl.idle[i+1:]...)
			pl.idle[:cap(pl.idle)][len(pl.idle)] = nil
			break
		}
	}
	lp.closeUp(u)
}

func (lp *loop) closeUp(u *lupconn) {
	if u.fd < 0 {
		return // closed already
	}
	// Closing the descriptor also removes it from the epoll set.
	unix.Close(u.fd)
	if u.fd < len(lp.ups) && lp.ups[u.fd] == u {
		lp.ups[u.fd] = nil
	}
	u.fd = -1
	u.pool.open--
	u.lc = nil
}

// sweepPools closes the pooled connections idle longer than their idle
// timeout and forgets pools without connections: the targets of an upstream replaced by
// a reload are never asked for again, so their connections would
// otherwise stay open until the upstream closed them. It runs with the
// deadline scan.
func (lp *loop) sweepPools(now int64) {
	for key, pl := range lp.pools {
		// LIFO: the oldest connections are at the bottom.
		n := 0
		for n < len(pl.idle) && pl.idleTO > 0 && now-pl.idle[n].idleSince > pl.idleTO {
			lp.closeUp(pl.idle[n])
			n++
		}
		if n > 0 {
			rest := copy(pl.idle, pl.idle[n:])
			clear(pl.idle[rest:])
			pl.idle = pl.idle[:rest]
		}
		if len(pl.idle) > 0 && !pl.key.Reusable() {
			lp.closeIdle(pl) // ejected, failing checks or retired
		}
		if pl.open == 0 {
			delete(lp.pools, key)
		}
	}
}

// closeIdle closes a pool's idle connections.
func (lp *loop) closeIdle(pl *lpool) {
	for i, u := range pl.idle {
		lp.closeUp(u)
		pl.idle[i] = nil
	}
	pl.idle = pl.idle[:0]
}

// closeUps closes every upstream connection (the loop ends).
func (lp *loop) closeUps() {
	for _, u := range lp.ups {
		if u != nil {
			lp.closeUp(u)
		}
	}
	for _, pl := range lp.pools {
		pl.idle = nil
	}
}
