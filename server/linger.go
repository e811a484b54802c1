package server

import (
	"net"
	"time"
)

// Lingering close (issue 18, item 7). When the server closes a connection
// while the client may still be sending (an error answer such as 414, 431
// or 413, or a response sent before the request's body or pipelined
// requests were read), closing at once makes the kernel answer the unread
// bytes with a reset, which can destroy the response before the client has
// read it. So the server does what nginx's lingering close does: it shuts
// down its write side (the response and a FIN go out), then reads and
// discards what the client still sends until the client closes, for at
// most lingerTime in all, lingerQuiet without input and lingerBytes, and
// only then closes. The goroutine engine lingers on the connection's
// goroutine; the event loop keeps the connection in its epoll set in a
// lingering state under the deadline scan (loopconn_linux.go), never
// blocking.
const (
	// lingerTime bounds a lingering close in all. nginx's lingering_time
	// is 30 s for any close; a client whose request was refused needs only
	// the time to finish sending it, and 5 s covers megabytes even at
	// modem speed while keeping such connections short-lived.
	lingerTime = 5 * time.Second
	// lingerQuiet bounds the wait for each read while lingering (nginx's
	// lingering_timeout, 5 s): a client that stops sending without closing
	// is not waited for the whole lingerTime.
	lingerQuiet = 2 * time.Second
	// lingerBytes bounds what a lingering close reads and discards. A
	// refused request may still have its body on the way (up to
	// Limits.MaxBodyBytes, 10 MiB by default); past this the client is
	// sending more than any request the server accepts, and the reset it
	// gets is deserved.
	lingerBytes = 16 << 20
	// lingerChunk is the largest read of a lingering close: the bytes are
	// discarded into the connection's read buffer, which has at least
	// initialReadBuf.
	lingerChunk = 64 << 10
)

// lingerWanted reports whether closing c now may reset bytes the client is
// still sending after a response: an error answer went out, or the current
// request's body or later requests were not read. A broken stream (read
// or write failed, the client closed) has nothing to wait for.
func (c *conn) lingerWanted() bool {
	return !c.broken && (c.errSent || c.r < c.w || !c.req.body.done)
}

// linger is the goroutine engine's lingering close: shut down the write
// side, then discard input until EOF or a bound (see lingerTime). The
// caller closes the stream afterwards. Streams that cannot half-close
// (in-memory pipes) are closed at once.
func (c *conn) linger() {
	if !c.halfClose() {
		return
	}
	end := time.Now().Add(lingerTime)
	buf := c.rbuf[:min(len(c.rbuf), lingerChunk)]
	c.r, c.w = 0, 0
	for left := lingerBytes; left > 0; {
		now := time.Now()
		if !now.Before(end) {
			return
		}
		dl := now.Add(lingerQuiet)
		if dl.After(end) {
			dl = end
		}
		c.st.SetReadDeadline(dl)
		n, err := c.st.Read(buf[:min(len(buf), left)])
		left -= n
		if err != nil {
			return
		}
	}
}

// halfClose shuts down the write side of c's stream and reports whether it
// could: a FIN, or over TLS a close_notify and then the FIN (crypto/tls
// sends none), so that a client still sending reads the last frames or
// the answer, then the end, instead of a reset that discards them.
func (c *conn) halfClose() bool {
	switch st := c.st.(type) {
	case interface{ CloseWrite() error }:
		return st.CloseWrite() == nil
	case tlsConnStream:
		tc := st.tlsConn()
		if tc == nil || tc.CloseWrite() != nil { // fails before a handshake completed
			return false
		}
		raw, ok := tc.NetConn().(interface{ CloseWrite() error })
		return ok && raw.CloseWrite() == nil
	}
	return false
}

// rawCloseWrite sends the FIN of c, a socket under crypto/tls.
func rawCloseWrite(c net.Conn) error {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return errNoHalfClose
}
