package server

import (
	"bytes"
	"errors"

	phttp "github.com/simdedge/simdedge/parse/http"
	"net"
	"sync"
	"time"

	"github.com/simdedge/simdedge/server/metrics"
)

// h2Preface is the client connection preface (RFC 9113 §3.4). Its first
// line is what an HTTP/1.1 parser sees as a request with version 2.0.
const (
	h2Preface     = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
	h2PrefaceLine = "PRI * HTTP/2.0\r\n"
	// h2ALPN is the TLS protocol name of HTTP/2 (RFC 9113 §3.2).
	h2ALPN = "h2"
)

// h2Registry is the server's HTTP/2 state shared by its listeners: which
// listeners take h2c with prior knowledge, and the HTTP/2 connections
// open (so that Shutdown and StopListener send them GOAWAY).
type h2Registry struct {
	mu    sync.Mutex
	h2c   map[any]bool
	conns map[*h2conn]any // connection -> its listener's key
}

// EnableH2C makes the connections of listener l (given afterwards to
// ServeTCP, ServeLoop or ServeStream) that start with the HTTP/2
// connection preface speak HTTP/2 (h2c with prior knowledge, RFC 9113
// §3.3). Without it the preface is answered as HTTP/1.1 answers an
// unknown version (505). The check costs nothing on HTTP/1.1: it runs only
// where the first request of a connection failed to parse.
//
// h2 over TLS needs no call: a TLS listener whose tls.Config offers "h2"
// in NextProtos serves HTTP/2 on the connections that negotiate it.
func (s *Server) EnableH2C(l any) {
	s.h2.mu.Lock()
	defer s.h2.mu.Unlock()
	if s.h2.h2c == nil {
		s.h2.h2c = map[any]bool{}
	}
	s.h2.h2c[l] = true
}

// h2cOn reports whether listener l takes h2c.
func (r *h2Registry) h2cOn(l any) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.h2c[l] {
		return true
	}
	if nl, ok := l.(netListener); ok {
		return r.h2c[nl.Listener]
	}
	if nl, ok := l.(net.Listener); ok {
		return r.h2c[netListener{nl}]
	}
	return false
}

func (r *h2Registry) add(hc *h2conn, key any) {
	r.mu.Lock()
	if r.conns == nil {
		r.conns = map[*h2conn]any{}
	}
	r.conns[hc] = key
	r.mu.Unlock()
}

func (r *h2Registry) remove(hc *h2conn) {
	r.mu.Lock()
	delete(r.conns, hc)
	r.mu.Unlock()
}

// goaway starts the graceful close of every HTTP/2 connection of the
// listener key (nil: all of them): Shutdown and StopListener call it.
func (r *h2Registry) goaway(key any, all bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for hc, k := range r.conns {
		if all || k == key {
			hc.drain()
		}
	}
}

// h2Start reports whether the connection, whose first request failed to
// parse, is an HTTP/2 connection to serve: its listener takes h2c or TLS
// negotiated h2, and its bytes start with the preface.
func (c *conn) h2Start() bool {
	b := c.rbuf[c.r:c.w]
	if len(b) < len(h2PrefaceLine) || !bytes.HasPrefix(b, []byte(h2PrefaceLine)) {
		return false
	}
	return c.h2c || c.alpnH2()
}

// alpnH2 reports whether TLS negotiated h2 on the connection.
func (c *conn) alpnH2() bool {
	if t, ok := c.st.(tlsConnStream); ok {
		if tc := t.tlsConn(); tc != nil {
			return tc.ConnectionState().NegotiatedProtocol == h2ALPN
		}
	}
	return false
}

// h2Silent reports whether a first request that failed to parse with err
// gets no HTTP/1.1 answer: the client agreed on h2 by ALPN, or sent an
// h2c listener a version other than HTTP/1.x; it speaks neither protocol
// and an HTTP/1.1 answer would be read as frames (RFC 9113 §3.4: a bad
// preface ends the connection).
func (c *conn) h2Silent(err error) bool {
	badVersion := errors.Is(err, phttp.ErrInvalidVersion) || errors.Is(err, phttp.ErrUnsupportedVersion)
	return c.h2c && badVersion || c.alpnH2()
}

// serveH2 serves the connection as HTTP/2 until it ends; conn.serve closes
// the stream afterwards.
func (c *conn) serveH2() {
	hc := newH2conn(c)
	// HTTP/2 reads through hc.in, and its requests' bodies through their
	// streams, as HTTP/3's do: the HTTP/1.1 read buffer would be 4 KiB
	// kept for nothing for the connection's life. Its unread bytes are
	// newH2conn's now; the failed HTTP/1.1 parse's views into it go too
	// (as conn.parkIdle drops them). A conn without one goes to
	// anchorPool on release.
	c.rbuf, c.r, c.w = nil, 0, 0
	c.req.head = phttp.Request{}
	if r, ok := c.st.(inputReleaser); ok {
		r.releaseInput()
	}
	c.lst.HTTP2(c.shard, metrics.H2Conn)
	c.srv.h2.add(hc, c.lkey)
	defer c.srv.h2.remove(hc)
	hc.serve()
}

// h2Deadline is a deadline d from now, zero for none.
func h2Deadline(d time.Duration) time.Time {
	if d <= 0 {
		return time.Time{}
	}
	return time.Now().Add(d)
}
