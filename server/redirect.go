package server

import (
	"net"
)

// RedirectHTTPS wraps a plain listener whose every request is answered
// "308 Permanent Redirect" to the same host and target over https, on
// httpsPort (omitted when it is 443): config `redirect_to_https: true`.
// Serve it with ServeStream (goroutines): redirects are a trickle, and the
// answer keeps the connection alive like any response.
func RedirectHTTPS(l net.Listener, httpsPort string) StreamListener {
	return redirectListener{l, httpsPort, nil}
}

type redirectListener struct {
	net.Listener
	port string
	acme HTTPChallenger // may be nil (challenge.go)
}

func (l redirectListener) Accept() (Stream, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &redirectStream{Conn: c, port: l.port, acme: l.acme}, nil
}

// redirectStream marks a connection whose requests get the redirect: the
// connection serves it (conn.serveOne) in place of the server's handler.
type redirectStream struct {
	net.Conn
	port string
	acme HTTPChallenger
}

// defaultHTTPSPort is left out of Location.
const defaultHTTPSPort = "443"

// ServeEdge answers the redirect. The host is the request's Host without
// its port; a request without a usable host or with a target that is not
// a path gets 400, so that Location never carries bytes it should not.
func (rs *redirectStream) ServeEdge(w *ResponseWriter, r *Request) {
	if serveChallenge(rs.acme, w, r) {
		return
	}
	host := hostWithoutPort(r.Host())
	target := r.Target()
	if len(host) == 0 || !validRedirectHost(host) || len(target) == 0 || target[0] != '/' {
		w.WriteHeader(400)
		w.SetClose()
		return
	}
	loc := make([]byte, 0, len("https://")+len(host)+1+len(rs.port)+len(target))
	loc = append(loc, "https://"...)
	loc = append(loc, host...)
	if rs.port != defaultHTTPSPort {
		loc = append(loc, ':')
		loc = append(loc, rs.port...)
	}
	loc = append(loc, target...)
	w.AddHeaderBytes([]byte("Location"), loc)
	w.WriteHeader(308)
}

// hostWithoutPort strips ":port" from a Host value, keeping an IPv6
// literal's brackets.
func hostWithoutPort(h []byte) []byte {
	if len(h) > 0 && h[0] == '[' {
		for i, c := range h {
			if c == ']' {
				return h[:i+1]
			}
		}
		return nil
	}
	for i, c := range h {
		if c == ':' {
			return h[:i]
		}
	}
	return h
}

// validRedirectHost accepts the bytes of a reg-name or an IP literal
// (RFC 3986 §3.2.2, without percent-encoding): letters, digits, '-', '.',
// '_', '~', and ':' and brackets for IPv6.
func validRedirectHost(h []byte) bool {
	for _, c := range h {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '-', c == '.', c == '_', c == '~', c == ':', c == '[', c == ']':
		default:
			return false
		}
	}
	return true
}
