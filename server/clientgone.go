package server

import (
	"errors"
	"os"
	"time"
)

// Watching an HTTP/1.1 client while its handler runs. A handler that
// streams, long-polls or waits on an upstream wants to stop when the client
// goes away (net/http cancels the request's context then); over HTTP/2 the
// stream's reset says so (h2gone.go), over HTTP/1.1 only a read of the
// connection does. The watch is that read, done in the background once the
// request body has been read to its end, as net/http's connReader does: it
// reads one byte, so a pipelined request that arrives meanwhile is kept,
// and an EOF or a read error means the client is gone.

// clientWatch is one background read of a connection (conn.watch).
type clientWatch struct {
	done chan struct{} // closed when the read has returned
	b    [1]byte
	n    int
	err  error
}

// OnClientGone registers f to run once if the client goes away before the
// handler returns. Over HTTP/2 it is OnStreamGone. Over HTTP/1.1 on a
// stream connection run by a goroutine, a background read watches the
// connection from now until the handler returns (or hijacks or tunnels
// it); f runs on that read's goroutine when it sees EOF or an error, so it
// must be quick and must not touch the Request or ResponseWriter
// (cancelling a context is the use). A byte that arrives meanwhile (a
// pipelined request) is kept for the next request.
//
// It reports false and registers nothing while request body bytes remain
// unread (the body reader owns the connection's reads until its EOF; call
// again then), on message transports, on a connection an event loop serves
// inline, and when a watch is already registered.
func (r *Request) OnClientGone(f func()) bool {
	if r.body.h2 != nil || r.body.h3 != nil {
		return r.OnStreamGone(f)
	}
	c := r.c
	if c == nil || c.inLoop || c.watch != nil || c.hijacked || !r.body.done || r.body.err != nil {
		return false
	}
	w := &clientWatch{done: make(chan struct{})}
	c.watch = w
	// The read waits as long as the handler runs: the header and body
	// deadlines do not apply to it (net/http clears them too).
	c.st.SetReadDeadline(time.Time{})
	c.readDL = time.Time{}
	st := c.st
	go func() {
		w.n, w.err = st.Read(w.b[:])
		if w.n == 0 && w.err != nil && !errors.Is(w.err, os.ErrDeadlineExceeded) {
			f()
		}
		close(w.done)
	}()
	return true
}

// stopWatch ends the background read, if any, and waits for it: the
// connection's goroutine reads the stream again after it. Every request
// calls it; it inlines to one nil check.
func (c *conn) stopWatch() {
	if c.watch != nil {
		c.endWatch()
	}
}

// endWatch is stopWatch's slow path. The byte the read took goes after the
// bytes already buffered; a client that went away closes the connection
// after the current response.
func (c *conn) endWatch() {
	w := c.watch
	c.watch = nil
	c.st.SetReadDeadline(aLongTimeAgo)
	<-w.done
	// The stream's deadline is now in the past; the next
	// setReadDeadline must set it whatever it last set.
	c.readDL = aLongTimeAgo
	switch {
	case w.n > 0:
		if c.w == len(c.rbuf) {
			c.grow(0)
		}
		c.rbuf[c.w] = w.b[0]
		c.w++
	case w.err != nil && !errors.Is(w.err, os.ErrDeadlineExceeded):
		c.broken = true
	}
}
