//go:build linux

package server

import (
	"net"
	"net/netip"
	"time"

	"github.com/simdedge/simdedge/server/access"
	"github.com/simdedge/simdedge/server/metrics"
	"github.com/simdedge/simdedge/server/proxyproto"
	"golang.org/x/sys/unix"
)

// The event loop's side of ListenerPolicy (listenpolicy.go): the rules at
// accept, the PROXY header from the read buffer before HTTP parsing, and
// for TLS listeners from the handshake goroutine before the ClientHello.

// admitPolicy applies the listener's policy to a connection just
// accepted: false closes it (refused by the rules on its peer address).
// On a PROXY listener the rules wait for the header, and a trusted peer is
// not counted per address.
func (lp *loop) admitPolicy(h *heldConn) bool {
	peer := sockaddrAddr(h.sa)
	if lp.pol.ProxyProtocol {
		if lp.srv.settings().trusted.Contains(peer) {
			h.counted = false
		}
		return true
	}
	return lp.pol.Rules.Check(peer) != access.Denied
}

func sockaddrAddr(sa unix.Sockaddr) netip.Addr {
	switch a := sa.(type) {
	case *unix.SockaddrInet4:
		return netip.AddrFrom4(a.Addr)
	case *unix.SockaddrInet6:
		return netip.AddrFrom16(a.Addr).Unmap()
	}
	return netip.Addr{}
}

// proxyHeader parses the PROXY header at the start of a plain connection's
// buffer. It reports whether serving may go on: false while the header is
// incomplete (the ReadHeader deadline from the accept runs) or when the
// connection was closed.
func (lp *loop) proxyHeader(lc *lconn) bool {
	c := lc.c
	n, h, err := proxyproto.Parse(c.rbuf[c.r:c.w])
	if err == proxyproto.ErrNeedMore {
		// The 4 KiB read buffer holds any header Parse accepts.
		return false
	}
	var peer netip.AddrPort
	if a, ok := lc.st.remote.(*net.TCPAddr); ok {
		ap := a.AddrPort()
		peer = netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	}
	client, verr := proxyVerdict(lp.pol, c.cfg.trusted, peer, h, err)
	if verr != nil {
		lp.closeConn(lc)
		return false
	}
	lc.pp = false
	if err == nil {
		c.r += n
	}
	if client != peer {
		a := net.TCPAddrFromAddrPort(client)
		lc.st.remote, c.req.remote = a, a
		c.req.remoteIP = c.req.remoteIP[:0]
	}
	if !c.ipHeld && !lp.countClient(&c.ip, &c.ipHeld, client) {
		lp.closeConn(lc)
		return false
	}
	return true
}

// countClient counts the client a PROXY header named for MaxConnsPerIP
// (its trusted peer was not counted at accept); false: over the cap.
func (lp *loop) countClient(ip *netip.Addr, held *bool, client netip.AddrPort) bool {
	k, ok := clientKey(net.TCPAddrFromAddrPort(client))
	if !ok {
		return true
	}
	if !lp.srv.ips.acquire(k, lp.srv.settings().Limits.MaxConnsPerIP) {
		lp.mlst.Refused(0, metrics.RefusedPerIP)
		return false
	}
	*ip, *held = k, true
	return true
}

// shakeProxy reads the PROXY header of a TLS connection on its handshake
// goroutine, before the ClientHello. It returns the connection to read the
// rest from (the bytes after the header first) and sets the client's
// address, or nil to close it.
func (t *loopTLS) shakeProxy(nc net.Conn, deadline time.Time) net.Conn {
	pc := &proxyConn{Conn: nc, pol: t.lp.pol}
	if pc.readProxyHeader(deadline, t.lp.srv.settings().trusted) != nil {
		return nil
	}
	nc.SetReadDeadline(deadline) // readProxyHeader cleared it
	t.w.remote = pc.RemoteAddr()
	if !t.h.counted && !t.lp.countClient(&t.h.ip, &t.h.counted, addrPortOf(t.w.remote)) {
		return nil
	}
	return pc
}

func addrPortOf(a net.Addr) netip.AddrPort {
	if t, ok := a.(*net.TCPAddr); ok {
		ap := t.AddrPort()
		return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	}
	return netip.AddrPort{}
}
