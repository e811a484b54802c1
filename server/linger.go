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
	c.r, c.w = 0, 0
	lingerDiscard(c.st, c.rbuf[:min(len(c.rbuf), lingerChunk)])
}

// lingerStream is what a lingering close reads from: a Stream, or the
// socket of a TLS handshake.
type lingerStream interface {
	Read(p []byte) (int, error)
	SetReadDeadline(t time.Time) error
}

// lingerDiscard shuts down st's write side (halfClose: what was written
// goes out, then a FIN), then reads into buf and discards until EOF, an error or
// the bounds (lingerTime, lingerQuiet, lingerBytes). It returns at once
// if st cannot half-close. The caller closes st afterwards. It is the one
// lingering close of blocking streams: error answers of the goroutine
// engine, and failed TLS handshakes on both engines (lingerHandshake).
func lingerDiscard(st lingerStream, buf []byte) {
	if !halfClose(st) {
		return
	}
	end := time.Now().Add(lingerTime)
	for left := lingerBytes; left > 0; {
		now := time.Now()
		if !now.Before(end) {
			return
		}
		dl := now.Add(lingerQuiet)
		if dl.After(end) {
			dl = end
		}
		st.SetReadDeadline(dl)
		n, err := st.Read(buf[:min(len(buf), left)])
		left -= n
		if err != nil {
			return
		}
	}
}

// lingerHandshakeBuf is the discard buffer of a failed handshake's
// lingering close, on the handshake goroutine's stack.
const lingerHandshakeBuf = 4 << 10

// lingerHandshake closes the socket of a failed TLS handshake lingering,
// on both engines (the handshake runs on a goroutine on both). crypto/tls
// has written an alert: certificate_required when client_auth requires a
// certificate the client did not send, bad_certificate, an unknown CA...
// In TLS 1.3 the client's side of the handshake is done once it sent its
// Finished, so it has usually sent its request behind it; closing with
// those bytes unread makes the kernel answer with a reset, which can
// destroy the alert before the client reads it (the client then reports
// "connection reset" instead of "certificate required"). A handshake that
// timed out has nobody to tell and is closed at once.
func lingerHandshake(raw lingerStream, err error) {
	if isTimeout(err) {
		return
	}
	var buf [lingerHandshakeBuf]byte
	lingerDiscard(raw, buf[:])
}

// halfClose shuts down the write side of st and reports whether it could:
// a FIN, or over TLS a close_notify and then the FIN (crypto/tls sends
// none), so that a client still sending reads the last frames or the
// answer, then the end, instead of a reset that discards them.
func halfClose(st lingerStream) bool {
	switch st := st.(type) {
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
