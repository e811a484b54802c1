package proxy

import (
	"strconv"

	phttp "github.com/simdedge/simdedge/parse/http"
	"github.com/simdedge/simdedge/server"
)

// The X-Forwarded-* fields, written by both proxy paths through appendHead.
//
// Whom to believe is Options.TrustedProxies (the top-level
// trusted_proxies): from a trusted peer (a load balancer in front of the
// edge) the X-Forwarded-For received is extended with the peer's address,
// and the X-Forwarded-Host, -Proto and -Port it sent are kept, since they
// describe the client's original request; from any other peer they are
// dropped and rebuilt, X-Forwarded-For holding the peer alone, so that a
// client cannot make the upstream believe an address or scheme of its
// choosing. The peer is the PROXY protocol source when the listener takes
// PROXY headers.

var (
	xffField   = "X-Forwarded-For"
	xfhField   = "X-Forwarded-Host"
	xfpField   = "X-Forwarded-Proto"
	xfPortName = "X-Forwarded-Port"
)

// isForwardingField: the fields appendForwarded rebuilds.
func isForwardingField(name []byte) bool {
	return len(name) > len("X-Forwarded-") && (name[0]|0x20) == 'x' &&
		(phttp.EqualFold(name, xffField) || phttp.EqualFold(name, xfpField) ||
			phttp.EqualFold(name, xfhField) || phttp.EqualFold(name, xfPortName))
}

// appendForwarded appends X-Forwarded-For, -Proto, -Host and -Port.
// authority is the absolute-form target's (nil for origin form).
func (p *Proxy) appendForwarded(b []byte, r *server.Request, hs phttp.Headers, head *phttp.Request, authority []byte) []byte {
	trusted := r.PeerTrusted()
	b = append(b, "X-Forwarded-For: "...)
	if trusted {
		for i := hs.Index(xffField, 0); i >= 0; i = hs.Index(xffField, i+1) {
			b = append(b, hs[i].Value...)
			b = append(b, ", "...)
		}
	}
	if ip := r.RemoteIP(); ip != nil {
		b = append(b, ip...)
	} else {
		b = append(b, "unknown"...)
	}
	b = append(b, "\r\n"...)
	if !trusted || !appendReceived(&b, hs, xfpField) {
		b = append(b, "X-Forwarded-Proto: "...)
		if r.TLS() {
			b = append(b, "https"...)
		} else {
			b = append(b, p.proto...)
		}
		b = append(b, "\r\n"...)
	}
	if !trusted || !appendReceived(&b, hs, xfhField) {
		host := authority
		if host == nil {
			host = head.Host
		}
		if len(host) > 0 {
			b = appendField(b, xfhName, host)
		}
	}
	if !trusted || !appendReceived(&b, hs, xfPortName) {
		if port := r.LocalPort(); port > 0 {
			b = append(b, "X-Forwarded-Port: "...)
			b = strconv.AppendInt(b, int64(port), 10)
			b = append(b, "\r\n"...)
		}
	}
	return b
}

var xfhName = []byte(xfhField)

// appendReceived forwards the first field named name as received and
// reports whether there was one.
func appendReceived(b *[]byte, hs phttp.Headers, name string) bool {
	i := hs.Index(name, 0)
	if i < 0 {
		return false
	}
	*b = appendField(*b, hs[i].Name, hs[i].Value)
	return true
}
