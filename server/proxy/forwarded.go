package proxy

import (
	"bytes"
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

// Forwarding is what the proxy does with the X-Real-IP and Forwarded
// (RFC 7239) fields of a request (Options.UntrustedForwarding; the config
// key untrusted_forwarding). Upstreams read them for the client's address
// as they read X-Forwarded-For, so a value a client chose must not reach
// them as if the edge had written it.
type Forwarding uint8

const (
	// ForwardingDrop (the default): from a peer outside trusted_proxies
	// both are removed; from a trusted one they pass as received. Safe
	// without adding a byte to requests that carry neither: the client
	// address is in X-Forwarded-For. nginx passes both unless told
	// (proxy_set_header), Envoy sanitizes neither (only X-Forwarded-For,
	// -Proto and its own x-envoy-*), HAProxy writes Forwarded only with
	// "option forwarded": passing is the common default, and the unsafe
	// one.
	ForwardingDrop Forwarding = iota
	// ForwardingOverwrite: the edge writes both on every request, as it
	// writes X-Forwarded-For: X-Real-IP is the client address (as
	// trusted_proxies decide; a trusted peer's own X-Real-IP is kept),
	// and Forwarded is this hop's element (for, host, proto), after the
	// elements a trusted peer sent; an untrusted peer's are dropped.
	ForwardingOverwrite
	// ForwardingPass forwards both as received, from any peer (an
	// upstream that checks them itself, or a route's request_headers
	// that sets them).
	ForwardingPass
)

const (
	xrealField = "X-Real-IP"
	fwdField   = "Forwarded"
)

// dropsClientField compares lengths once for both names.
var _ [len(xrealField) - len(fwdField)]struct{}

// dropsClientField reports whether the request field name is an
// X-Real-IP or Forwarded field that appendHead does not copy: in drop
// mode, one from a peer outside trusted_proxies (trusted false); in
// overwrite mode, every one (appendClientFields writes what goes).
func (p *Proxy) dropsClientField(name []byte, trusted bool) bool {
	if p.fwd == ForwardingPass || trusted && p.fwd == ForwardingDrop || len(name) != len(xrealField) {
		return false // both names have 9 bytes: one length check first
	}
	return phttp.EqualFold(name, xrealField) || phttp.EqualFold(name, fwdField)
}

// appendClientFields writes X-Real-IP and Forwarded in overwrite mode.
// host is the Host the request arrived with.
func (p *Proxy) appendClientFields(b []byte, r *server.Request, hs phttp.Headers, host []byte, trusted bool) []byte {
	if p.fwd != ForwardingOverwrite {
		return b
	}
	if !trusted || !appendReceived(&b, hs, xrealField) {
		b = append(b, "X-Real-IP: "...)
		if ip := r.ClientIPText(); ip != nil {
			b = append(b, ip...)
		} else {
			b = append(b, "unknown"...)
		}
		b = append(b, "\r\n"...)
	}
	b = append(b, "Forwarded: "...)
	if trusted {
		for i := hs.Index(fwdField, 0); i >= 0; i = hs.Index(fwdField, i+1) {
			b = append(b, hs[i].Value...)
			b = append(b, ", "...)
		}
	}
	// This hop's element (RFC 7239 §4): the peer that connected, the
	// Host it asked for and the scheme it used. An IPv6 address is
	// bracketed and quoted (§6), the host quoted (it may hold ':').
	b = append(b, "for="...)
	switch ip := r.RemoteIP(); {
	case ip == nil:
		b = append(b, "unknown"...)
	case bytes.IndexByte(ip, ':') >= 0:
		b = append(b, `"[`...)
		b = append(b, ip...)
		b = append(b, `]"`...)
	default:
		b = append(b, ip...)
	}
	if len(host) > 0 && quotable(host) {
		b = append(b, `;host="`...)
		b = append(b, host...)
		b = append(b, '"')
	}
	b = append(b, ";proto="...)
	if r.TLS() {
		b = append(b, "https"...)
	} else {
		b = append(b, p.proto...)
	}
	return append(b, "\r\n"...)
}

// quotable: v can go in a quoted-string as is (no '"', '\\' or control
// byte; the parsers refuse those in Host already, this keeps the field
// well-formed whatever the source).
func quotable(v []byte) bool {
	for _, c := range v {
		if c == '"' || c == '\\' || c < 0x20 || c == 0x7f {
			return false
		}
	}
	return true
}

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
// trusted: r.PeerTrusted().
func (p *Proxy) appendForwarded(b []byte, r *server.Request, hs phttp.Headers, head *phttp.Request, authority []byte, trusted bool) []byte {
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
	host := authority
	if host == nil {
		host = head.Host
	}
	if !trusted || !appendReceived(&b, hs, xfhField) {
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
	return p.appendClientFields(b, r, hs, host, trusted)
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
