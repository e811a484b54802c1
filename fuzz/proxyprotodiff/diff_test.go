package proxyprotodiff

import (
	"bufio"
	"bytes"
	"net/netip"
	"testing"

	pp "github.com/pires/go-proxyproto"
	"github.com/simdedge/simdedge/server/proxyproto"
)

type result struct {
	ok    bool
	n     int
	local bool
	src   netip.AddrPort
}

func ours(b []byte) result {
	n, h, err := proxyproto.Parse(b)
	if err != nil {
		return result{}
	}
	return result{ok: true, n: n, local: h.Local, src: h.Source}
}

func theirs(b []byte) result {
	r := bytes.NewReader(b)
	br := bufio.NewReaderSize(r, 64<<10)
	h, err := pp.Read(br)
	if err != nil {
		return result{}
	}
	res := result{ok: true, n: len(b) - br.Buffered() - r.Len()}
	if src, _, ok := h.TCPAddrs(); ok && h.Command.IsProxy() {
		ap := src.AddrPort()
		res.src = netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	} else if src, _, ok := h.UDPAddrs(); ok && h.Command.IsProxy() {
		ap := src.AddrPort()
		res.src = netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	} else {
		res.local = true
	}
	return res
}

// divergent reports the inputs on which simdedge is stricter on purpose.
func divergent(b []byte, o, t result) string {
	switch {
	case !o.ok && t.ok && len(b) > 12 && bytes.HasPrefix(b, []byte("\r\n\r\n\x00\r\nQUIT\n")) && t.n > proxyproto.MaxV2Len:
		return "v2 longer than MaxV2Len (simdedge's bound)"
	case o.ok && o.local && !t.ok && isV2(b) && b[12]&0x0f == 0:
		// Specification §2.2, LOCAL: "the receiver must accept this
		// connection as valid ... and discard the protocol block
		// including the family which is ignored"; go-proxyproto
		// still checks the family and the block's length.
		return "v2 LOCAL with an unchecked address block"
	case o.ok && o.local && !t.ok && isV2(b) && b[13] == 0:
		// §2.2, family UNSPEC: "the receiver is free to accept the
		// connection anyway and use the real endpoint addresses or
		// to reject it"; simdedge accepts (as HAProxy does),
		// go-proxyproto rejects.
		return "v2 PROXY with the UNSPEC family"
	}
	return ""
}

func isV2(b []byte) bool { return len(b) >= 16 && bytes.HasPrefix(b, []byte("\r\n\r\n\x00\r\nQUIT\n")) }

func check(t *testing.T, b []byte) {
	o, th := ours(b), theirs(b)
	if o.ok && o.src.IsValid() {
		o.src = netip.AddrPortFrom(o.src.Addr().Unmap(), o.src.Port())
	}
	if o == th {
		return
	}
	if why := divergent(b, o, th); why != "" {
		t.Logf("%q: intended divergence: %s", b, why)
		return
	}
	t.Fatalf("%q:\nsimdedge       %+v\ngo-proxyproto  %+v", b, o, th)
}

func FuzzDiff(f *testing.F) {
	for _, s := range []string{
		"PROXY TCP4 192.0.2.1 198.51.100.1 4711 80\r\nGET / HTTP/1.1\r\n\r\n",
		"PROXY TCP6 2001:db8::1 2001:db8::2 1 443\r\n",
		"PROXY UNKNOWN\r\n",
		"PROXY UNKNOWN 1 2 3 4\r\n",
		"GET / HTTP/1.1\r\n\r\n",
		"PROXY TCP4 192.0.2.1 192.0.2.2 080 80\r\n",
		"PROXY TCP4 192.0.2.1 192.0.2.2 65536 80\r\n",
		"PROXY TCP4 2001:db8::1 2001:db8::2 1 2\r\n",
		"PROXY TCP6 ::ffff:192.0.2.1 ::1 1 2\r\n",
		"PROXY TCP4  192.0.2.1 192.0.2.2 1 2\r\n",
		"PROXY TCP4 192.0.2.1 192.0.2.2 1 2\n",
		"PROXY TCP4 192.0.2.1 192.0.2.2 1 2 3\r\n",
		"PROXY UDP4 192.0.2.1 192.0.2.2 1 2\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Add(proxyproto.AppendV2(nil, netip.MustParseAddrPort("192.0.2.1:1"), netip.MustParseAddrPort("192.0.2.2:2")))
	f.Add(proxyproto.AppendV2(nil, netip.MustParseAddrPort("[2001:db8::1]:1"), netip.MustParseAddrPort("[2001:db8::2]:2")))
	f.Add(proxyproto.AppendV2(nil, netip.AddrPort{}, netip.AddrPort{}))
	f.Fuzz(check)
}
