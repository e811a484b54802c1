package proxy

import (
	"net"
	"net/netip"

	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/proxyproto"
)

// Sending PROXY protocol headers to upstreams (config: upstreams[].
// send_proxy_protocol: v1|v2). The header names the client connection
// (RemoteAddr, itself the PROXY source when the edge received one) and
// the address it reached, so it describes one client connection: an
// upstream connection that carried it cannot serve another client. Such
// upstreams are therefore not pooled (one connection per request, closed
// after the response; HAProxy makes them private to the client session
// instead, which would need per-client pools), and they are proxied on
// goroutines on every engine (LoopProxy hands them off: loopable is
// false). Active health checks send a header that names no client.

// appendProxyHeader appends the PROXY header of version v (0: none) for r
// (nil: a LOCAL / UNKNOWN header, for health checks).
func appendProxyHeader(b []byte, v int, r *server.Request) []byte {
	if v == 0 {
		return b
	}
	var src, dst netip.AddrPort
	if r != nil {
		src, dst = addrPort(r.RemoteAddr()), addrPort(r.LocalAddr())
	}
	if v == 1 {
		return proxyproto.AppendV1(b, src, dst)
	}
	return proxyproto.AppendV2(b, src, dst)
}

func addrPort(a net.Addr) netip.AddrPort {
	if t, ok := a.(*net.TCPAddr); ok {
		ap := t.AddrPort()
		return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	}
	return netip.AddrPort{}
}
