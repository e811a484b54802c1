package server

import (
	"errors"
	"time"
)

// ErrNoHijack is returned by Hijack when the connection cannot be handed
// over: HTTP/2, a message transport, an event loop running the handler
// inline, or a response that has already started.
var ErrNoHijack = errors.New("server: connection cannot be hijacked")

// Hijack hands the HTTP/1.1 connection of w to the caller, as net/http's
// http.Hijacker does: the responses to earlier pipelined requests are
// written first, and from then on the server neither reads, writes nor
// closes the stream; the caller owns it and must close it. buffered holds
// the bytes the client sent past this request's head (and its body, if it
// was read) that the server had already read; it is the caller's copy.
// Deadlines are cleared. The server forgets the connection: Shutdown does
// not wait for it and the connection counters count it closed.
//
// Only the goroutine engine runs such handlers: the event loop hands a
// connection to a goroutine before a handler that is not inline sees it.
func (w *ResponseWriter) Hijack() (st Stream, buffered []byte, err error) {
	c, ok := w.sink.(*conn)
	if !ok || c.inLoop || w.committed || w.aborted || c.hijacked {
		return nil, nil, ErrNoHijack
	}
	c.stopWatch()
	w.committed, w.aborted, w.closeConn = true, true, true
	if err := c.flush(); err != nil {
		return nil, nil, err
	}
	c.hijacked, c.broken = true, true
	buffered = append([]byte(nil), c.rbuf[c.r:c.w]...)
	c.r = c.w
	c.st.SetReadDeadline(time.Time{})
	c.st.SetWriteDeadline(time.Time{})
	return c.st, buffered, nil
}
