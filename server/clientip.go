package server

import (
	"net"
	"net/netip"

	"github.com/simdedge/simdedge/server/access"
)

// The client's identity behind trusted proxies (Options.TrustedProxies).
// The connection's peer is the kernel's peer address, or the source
// address of a PROXY protocol header when the listener takes them
// (proxyproto.go): RemoteAddr and RemoteIP already report that one.

// ClientIP is the address of the client the request comes from: the peer
// (RemoteAddr), unless the peer is a trusted proxy, in which case
// X-Forwarded-For is walked from the right past trusted proxies to the
// first untrusted address (access.ClientIP). It is computed at most once
// per request and allocates nothing; the zero Addr means the transport
// has no IP addresses (in-memory pipes).
func (r *Request) ClientIP() netip.Addr {
	if !r.clientOK {
		r.client = access.ClientIP(r.PeerIP(), r.trusted(), r.head.Headers)
		r.clientOK = true
	}
	return r.client
}

// ClientIPText is ClientIP in text form, as RemoteIP is the peer's
// ({client_ip} in a route's templates): RemoteIP itself when the client
// is the peer, else the address written into the request's own array.
// Valid until the handler returns; nil when there is no IP address.
func (r *Request) ClientIPText() []byte {
	c := r.ClientIP()
	if !c.IsValid() {
		return nil
	}
	if c == r.PeerIP() {
		return r.RemoteIP()
	}
	return c.AppendTo(r.clientText[:0])
}

// PeerIP is RemoteAddr's IP address (IPv4-mapped addresses unmapped), or
// the zero Addr for a transport without IP addresses.
func (r *Request) PeerIP() netip.Addr {
	switch a := r.remote.(type) {
	case *net.TCPAddr:
		return a.AddrPort().Addr().Unmap()
	case *net.UDPAddr:
		return a.AddrPort().Addr().Unmap()
	}
	return netip.Addr{}
}

// PeerTrusted reports whether the request's peer (RemoteAddr) is one of
// the trusted proxies: the proxy then extends X-Forwarded-For and keeps
// the X-Forwarded-Host, -Proto and -Port it received.
func (r *Request) PeerTrusted() bool {
	t := r.trusted()
	return !t.Empty() && t.Contains(r.PeerIP())
}

// LocalPort is the port of the listener the request arrived on (for
// X-Forwarded-Port), 0 when the transport has none.
func (r *Request) LocalPort() int {
	if r.c == nil || r.c.st == nil {
		return 0
	}
	if a, ok := r.c.st.LocalAddr().(*net.TCPAddr); ok {
		return a.Port
	}
	return 0
}

// LocalAddr is the address the request's connection was accepted on, or
// nil for a transport without one (messages, clones).
func (r *Request) LocalAddr() net.Addr {
	if r.c == nil || r.c.st == nil {
		return nil
	}
	return r.c.st.LocalAddr()
}

// trusted are the trusted proxies of the request's connection, or the
// server's current ones for a message or a clone.
func (r *Request) trusted() *access.Prefixes {
	if r.c != nil && r.c.cfg != nil {
		return r.c.cfg.trusted
	}
	if r.srv == nil {
		return nil
	}
	return r.srv.settings().trusted
}
