package server

import (
	phttp "github.com/simdedge/simdedge/parse/http"
)

// The mapping of an HTTP/2 request head onto the HTTP/1.1 head that
// handlers, the router and the proxy read (RFC 9113 §8.3.1): the same
// strictness as the HTTP/1.1 parser, so that nothing an HTTP/1.1 client
// could not have sent reaches a rule or an upstream. One method, one
// origin-form target, one Host, and that Host is what the edge routed on.

// h2CheckLine applies the HTTP/1.1 request line's rules (parse/http's
// CheckRequestLine) to :method and the target buildHead chose (:path, or
// :authority for CONNECT). Beyond them, :path is origin-form or, for
// OPTIONS, "*" (§8.3.1): the absolute form that HTTP/1.1 sends to proxies
// is :scheme and :authority in HTTP/2.
func h2CheckLine(method, target []byte, connect bool) bool {
	if phttp.CheckRequestLine(method, target) != nil {
		return false
	}
	return connect || target[0] == '/' || string(target) == "*"
}

// h2SetHost makes the head's Host from :authority (present: hasAuthority)
// and the host field at Headers[host] (-1: none), as §8.3.1 asks: a
// request with both must name the same one (clients must not send them
// different; a server should refuse them, and this one does: the router
// and allow/deny would read one and an upstream the other), compared ASCII
// case-insensitively and otherwise as sent, and the forwarded field then
// carries :authority's spelling; :authority alone becomes the Host field.
// The value is checked as the HTTP/1.1 parser checks Host (ValidHost:
// no userinfo, "/", "?", "#", "\", space or control byte, as they would
// reach an upstream's Host and redirect targets); empty is valid there
// too. Neither present is allowed (§8.3.1 makes :authority optional);
// the proxy then names its target.
func h2SetHost(h *phttp.Request, host int, authority []byte, hasAuthority bool) bool {
	switch {
	case hasAuthority && host >= 0:
		if !h2SameAuthority(authority, h.Headers[host].Value) {
			return false
		}
		h.Headers[host].Value = authority
	case hasAuthority:
		h.Headers = append(h.Headers, phttp.Header{Name: h2HostField, Value: authority})
	case host >= 0:
		authority = h.Headers[host].Value
	default:
		return true
	}
	h.Host = authority
	return len(authority) == 0 || phttp.ValidHost(authority)
}

// h2SameAuthority compares :authority and Host as the router compares
// hosts: ASCII case-insensitively.
func h2SameAuthority(a, b []byte) bool {
	return phttp.EqualFold(a, bytesView(b))
}
