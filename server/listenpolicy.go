package server

import (
	"errors"
	"net"
	"net/netip"
	"time"

	"github.com/simdedge/simdedge/server/access"
	"github.com/simdedge/simdedge/server/metrics"
	"github.com/simdedge/simdedge/server/proxyproto"
)

// ListenerPolicy is what a kernel TCP listener applies to a connection
// before HTTP (config: listeners[].proxy_protocol, allow, deny).
//
// PROXY protocol (v1 and v2, server/proxyproto): the header is read from
// the connection's first bytes, before HTTP or the TLS ClientHello, under
// the ReadHeader timeout counted from the accept, and at most
// proxyproto.MaxV2Len bytes. Its source address becomes the connection's
// client address everywhere: RemoteAddr, RemoteIP, ClientIP, access logs,
// rate-limit keys, allow/deny. Headers are believed only from peers in
// Options.TrustedProxies:
//
//   - a trusted peer must send one (as HAProxy's accept-proxy requires):
//     a trusted peer without a header is closed, since a load balancer
//     configured to send none is a misconfiguration that would otherwise
//     make every client look like the balancer;
//   - an untrusted peer that sends one is closed (it could name any
//     client); an untrusted peer without one is served as a direct
//     client under its own address;
//   - a LOCAL header (v2) or UNKNOWN (v1), a balancer's health check,
//     keeps the peer's address.
//
// On a PROXY listener the per-address connection cap
// (Limits.MaxConnsPerIP) counts the client the header names, once it is
// read, instead of the trusted peer (one balancer carries many clients);
// an untrusted peer is counted at accept as on any listener.
//
// Rules (allow/deny, deny wins) are checked on the peer's address as the
// connection is accepted, before anything is read; on a PROXY listener on
// the address the header gives, once read. A refused connection is closed
// without an answer.
type ListenerPolicy struct {
	ProxyProtocol bool
	Rules         access.Rules
}

// active reports whether p changes anything.
func (p *ListenerPolicy) active() bool { return p != nil && (p.ProxyProtocol || p.Rules.Active()) }

// WithPolicy returns l with p applied by ServeTCP, ServeTLS and ServeLoop
// (on either engine). l must be a kernel listener (net.Listen "tcp").
func WithPolicy(l net.Listener, p ListenerPolicy) net.Listener {
	if !p.active() {
		return l
	}
	return &policyListener{Listener: l, p: p}
}

// policyListener carries a ListenerPolicy to the engines. Its Accept
// applies it for the goroutine engine; the event loop unwraps it
// (listenerPolicy) and applies it itself.
type policyListener struct {
	net.Listener
	p ListenerPolicy
}

// listenerPolicy unwraps a policyListener.
func listenerPolicy(l net.Listener) (net.Listener, *ListenerPolicy) {
	if pl, ok := l.(*policyListener); ok {
		return pl.Listener, &pl.p
	}
	return l, nil
}

// Accept closes the connections the rules refuse by their peer address
// and, on a PROXY listener, wraps the others so that the header is read on
// the connection's goroutine (never here: a slow peer must not hold up
// accepting).
func (l *policyListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.p.ProxyProtocol {
			return &proxyConn{Conn: c, pol: &l.p}, nil
		}
		if l.p.Rules.Check(addrIP(c.RemoteAddr())) == access.Denied {
			c.Close()
			continue
		}
		return c, nil
	}
}

func addrIP(a net.Addr) netip.Addr {
	switch t := a.(type) {
	case *net.TCPAddr:
		return t.AddrPort().Addr().Unmap()
	case *net.UDPAddr: // HTTP/3 (h3serve.go)
		return t.AddrPort().Addr().Unmap()
	}
	return netip.Addr{}
}

// Errors that end a connection before HTTP (no answer is sent).
var (
	ErrProxyUntrusted = errors.New("server: PROXY header from an untrusted peer")
	ErrProxyMissing   = errors.New("server: trusted peer sent no PROXY header")
	ErrListenerDenied = errors.New("server: client address refused by the listener's rules")
)

// proxyVerdict decides on a connection whose first bytes parsed as err
// (proxyproto.Parse) with header h: the client address to use, or an
// error that closes the connection. peer is the kernel's peer address.
func proxyVerdict(pol *ListenerPolicy, trusted *access.Prefixes, peer netip.AddrPort, h proxyproto.Header, err error) (netip.AddrPort, error) {
	isTrusted := trusted.Contains(peer.Addr())
	client := peer
	switch err {
	case nil:
		if !isTrusted {
			return client, ErrProxyUntrusted
		}
		if !h.Local {
			client = netip.AddrPortFrom(h.Source.Addr().Unmap(), h.Source.Port())
		}
	case proxyproto.ErrNotProxy:
		if isTrusted {
			return client, ErrProxyMissing
		}
	default:
		return client, err
	}
	if pol.Rules.Check(client.Addr()) == access.Denied {
		return client, ErrListenerDenied
	}
	return client, nil
}

// proxyConn is a goroutine-engine connection of a PROXY listener: its
// header is read by readProxyHeader before anything else, and its
// RemoteAddr is the client's from then on.
type proxyConn struct {
	net.Conn
	pol    *ListenerPolicy
	remote net.Addr // the client's address once the header is read
	done   bool
	err    error
	pre    []byte // bytes read after the header
}

// CloseWrite shuts down the write side of the connection under p, so
// that a PROXY listener's connections close lingering (linger.go: error
// answers, failed TLS handshakes) and half-close in tunnels as others do.
func (p *proxyConn) CloseWrite() error {
	if cw, ok := p.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return errNoHalfClose
}

// proxyHeaderReader is a Stream whose PROXY header must be read first
// (conn.serve): proxyConn, and tlsStream over one.
type proxyHeaderReader interface {
	readProxyHeader(deadline time.Time, trusted *access.Prefixes) error
}

// proxyReadChunk is what each read of a header asks for: enough for any
// v1 header and a typical v2 one in one read.
const proxyReadChunk = 512

// readProxyHeader reads and checks the header (ListenerPolicy) by
// deadline, once.
func (p *proxyConn) readProxyHeader(deadline time.Time, trusted *access.Prefixes) error {
	if p.done {
		return p.err
	}
	p.done = true
	p.Conn.SetReadDeadline(deadline)
	defer p.Conn.SetReadDeadline(time.Time{})
	peer := netip.AddrPort{}
	if t, ok := p.Conn.RemoteAddr().(*net.TCPAddr); ok {
		ap := t.AddrPort()
		peer = netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	}
	buf := make([]byte, 0, proxyReadChunk)
	for {
		n, h, perr := proxyproto.Parse(buf)
		if perr == proxyproto.ErrNeedMore {
			if len(buf) == cap(buf) {
				buf = append(buf, make([]byte, min(cap(buf), proxyproto.MaxV2Len))...)[:len(buf)]
			}
			m, err := p.Conn.Read(buf[len(buf):cap(buf)])
			buf = buf[:len(buf)+m]
			if err != nil && m == 0 {
				p.err = err
				return err
			}
			continue
		}
		client, err := proxyVerdict(p.pol, trusted, peer, h, perr)
		if err != nil {
			p.err = err
			return err
		}
		p.remote = net.TCPAddrFromAddrPort(client)
		p.pre = buf[n:]
		return nil
	}
}

func (p *proxyConn) Read(b []byte) (int, error) {
	if !p.done {
		// Served without the hook (a Stream wrapper that hides it):
		// nobody is trusted, so a header closes the connection.
		if err := p.readProxyHeader(time.Time{}, nil); err != nil {
			return 0, err
		}
	}
	if p.err != nil {
		return 0, p.err
	}
	if len(p.pre) > 0 {
		n := copy(b, p.pre)
		p.pre = p.pre[n:]
		return n, nil
	}
	return p.Conn.Read(b)
}

// RemoteAddr is the client's address once the header is read.
func (p *proxyConn) RemoteAddr() net.Addr {
	if p.remote != nil {
		return p.remote
	}
	return p.Conn.RemoteAddr()
}

// readProxyHeader lets conn.serve reach the proxyConn under a TLS stream.
func (t *tlsStream) readProxyHeader(deadline time.Time, trusted *access.Prefixes) error {
	if pc, ok := t.raw.(*proxyConn); ok {
		return pc.readProxyHeader(deadline, trusted)
	}
	return nil
}

// perIPExempt reports whether st, just accepted, is a trusted peer on a
// PROXY listener: such a peer is not counted for MaxConnsPerIP.
func perIPExempt(st Stream, trusted *access.Prefixes) bool {
	var pc *proxyConn
	switch v := st.(type) {
	case *proxyConn:
		pc = v
	case *tlsStream:
		pc, _ = v.raw.(*proxyConn)
	}
	return pc != nil && trusted.Contains(addrIP(pc.Conn.RemoteAddr()))
}

// serveProxyHeader runs the PROXY step of a goroutine connection before
// its first request; false: the connection is to be closed.
func (c *conn) serveProxyHeader() bool {
	ph, ok := c.st.(proxyHeaderReader)
	if !ok {
		return true
	}
	if err := ph.readProxyHeader(deadline(time.Now(), c.cfg.Timeouts.ReadHeader), c.cfg.trusted); err != nil {
		return false
	}
	c.req.remote = c.st.RemoteAddr()
	c.req.remoteIP = c.req.remoteIP[:0]
	if !c.ipHeld {
		// A trusted peer was not counted at accept: the client the
		// header names is.
		ip, ok := clientKey(c.req.remote)
		if ok && !c.srv.ips.acquire(ip, c.cfg.Limits.MaxConnsPerIP) {
			c.lst.Refused(c.shard, metrics.RefusedPerIP)
			return false
		}
		c.ip, c.ipHeld = ip, ok
	}
	return true
}
