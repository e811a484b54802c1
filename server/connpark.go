package server

import (
	"net"
	"net/netip"
	"time"

	"github.com/simdedge/simdedge/server/accesslog"
	"github.com/simdedge/simdedge/server/metrics"
	"github.com/simdedge/simdedge/server/pathnorm"
	"github.com/simdedge/simdedge/server/trace"
)

// parked is what an idle keep-alive connection keeps while it waits for
// its next request without a conn: the fields that last from request to
// request. The conn itself (2.2 KiB with its Request and ResponseWriter)
// and its read and output buffers (4 KiB and the size of the last
// response) go back to be used by whichever connection has bytes next, as
// nginx frees an idle connection's buffers (docs/decisions/0043-idle-
// connections.md). 96 bytes: what every connection of a listener shares
// is in a connOrigin, one for all the idle connections of a loop.
type parked struct {
	o    *connOrigin
	st   Stream
	ip   netip.Addr
	alog *accesslog.Shard
	// remote is the Request's client address (the PROXY header's, if
	// one was read).
	remote net.Addr
	// gen numbers the connection's generated request IDs.
	gen    trace.IDGen
	shard  int32
	ipHeld bool
}

// connOrigin is what a connection has from its listener and from the
// settings it began with, the same for every connection of a loop (or of
// a listener) until a reload: kept once for all of them while they are
// idle rather than in each one's parked (docs/decisions/0049-small-idle-
// connections.md). Never written once made.
type connOrigin struct {
	srv   *Server
	cfg   *settings
	paths *pathnorm.Options
	home  any
	lkey  any
	lst   *metrics.Listener
	// altSvc is the listener's Alt-Svc value (altsvc.go).
	altSvc      string
	h2c, inLoop bool
}

// origin returns c's connOrigin.
func (c *conn) origin() connOrigin {
	return connOrigin{
		srv: c.srv, cfg: c.cfg, paths: c.paths, home: c.home, lkey: c.lkey,
		lst: c.lst, altSvc: c.altSvc, h2c: c.h2c, inLoop: c.inLoop,
	}
}

// originIs reports whether o (nil: no) is c's connOrigin.
func (c *conn) originIs(o *connOrigin) bool {
	return o != nil && o.srv == c.srv && o.cfg == c.cfg && o.paths == c.paths &&
		o.home == c.home && o.lkey == c.lkey && o.lst == c.lst &&
		o.altSvc == c.altSvc && o.h2c == c.h2c && o.inLoop == c.inLoop
}

// park moves the identity of the idle connection c into p, with o (for
// which c.originIs(o)), and clears c to be reused (unpark) by this or
// another connection. c must have nothing buffered, nothing to send and
// no request in progress.
func (c *conn) park(p *parked, o *connOrigin) {
	*p = parked{
		o: o, st: c.st, ip: c.ip, alog: c.alog, shard: int32(c.shard),
		remote: c.req.remote, gen: c.req.id.gen, ipHeld: c.ipHeld,
	}
	poison(c.rbuf[:c.w])
	c.r, c.w = 0, 0
	c.srv, c.st, c.cfg, c.paths, c.home, c.lkey = nil, nil, nil, nil, nil, nil
	c.lst, c.alog = nil, nil
	c.req.srv, c.req.remote = nil, nil
	c.req.remoteIP = c.req.remoteIP[:0]
	// As release: a buffer grown past maxPooledBuf for one large
	// request is not kept for every connection after it.
	if cap(c.rbuf) > maxPooledBuf {
		c.rbuf = make([]byte, initialReadBuf)
	}
	if cap(c.out) > maxPooledBuf {
		c.out = nil
	}
	c.out = c.out[:0]
}

// unpark gives the cleared conn c (from park or connPool) the identity in
// p, which is then empty.
func (c *conn) unpark(p *parked) {
	o := p.o
	c.srv, c.st, c.cfg, c.paths, c.home, c.lkey = o.srv, p.st, o.cfg, o.paths, o.home, o.lkey
	c.ip, c.lst, c.shard, c.alog = p.ip, o.lst, int(p.shard), p.alog
	c.ipHeld, c.h2c, c.inLoop, c.altSvc = p.ipHeld, o.h2c, o.inLoop, o.altSvc
	c.req.srv, c.req.remote, c.req.id.gen = o.srv, p.remote, p.gen
	c.req.remoteIP = c.req.remoteIP[:0] // a released conn keeps its last client's
	// What newConn resets: c may come from connPool, released by a
	// connection of either engine.
	c.r, c.w, c.out = 0, 0, c.out[:0]
	c.readDL, c.writeDL, c.now, c.evBegin = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	c.errSent, c.broken, c.hijacked, c.watch = false, false, false, nil
	c.canPark, c.resumed = false, false // the goroutine engine's resume sets them
	c.state.Store(stateActive)
	*p = parked{}
}
