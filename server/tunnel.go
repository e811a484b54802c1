package server

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Protocol switches (RFC 9110 §7.8, §15.2.2). After a 101 (Switching
// Protocols) the connection stops carrying HTTP/1.1: a handler that has
// another connection speaking the new protocol (a reverse proxy's upstream
// connection that answered 101) calls ResponseWriter.Tunnel, which sends
// the 101 head and then relays bytes both ways until both directions have
// ended. Only the goroutine engine runs such handlers: the event loop
// hands an upgrade request's connection to a goroutine before any handler
// sees it (its plan's Inliner and LoopProxier decline them), a loop-driven TLS
// connection included, which keeps its tls.Conn on the goroutine.

// tunnelBuf is the relay buffer of one direction. 32 KiB carries two TLS
// records (16 KiB each) per read and keeps a large WebSocket message to a
// few dozen system calls per MiB, while two buffers per tunnel keep a
// thousand open WebSockets under 64 MiB.
const tunnelBuf = 32 << 10

// ErrNoTunnel is returned by Tunnel when the connection cannot switch
// protocols: a message transport, an event loop running the handler
// inline, or a response that has already started.
var ErrNoTunnel = errors.New("server: connection cannot switch protocols")

var tunnelBufs = sync.Pool{New: func() any { b := make([]byte, tunnelBuf); return &b }}

var upgradeName = []byte("Upgrade")

// TunnelStats counts the bytes a Tunnel relayed, after the 101 head.
type TunnelStats struct {
	// ToPeer came from the client (the bytes the server had read past
	// the request head included); ToClient came from the peer
	// (peerBuffered included).
	ToPeer, ToClient int64
	// Idle: the tunnel ended because no byte moved either way for
	// Timeouts.TunnelIdle.
	Idle bool
}

// Tunnel switches the connection of w to protocol and relays it to peer.
// It sends "101 Switching Protocols" with the fields added to w
// (AddHeader), "Connection: upgrade" and "Upgrade: protocol", then copies
// bytes both ways: what the client sent after the request head (already
// read by the server) goes to peer first, peerBuffered (bytes already read
// from peer past its own 101) to the client first. When one side ends its
// output (EOF, or TLS close_notify), the other side's write half is shut
// down (CloseWrite: a TCP FIN, or a TLS close_notify) and the relay goes
// on the other way until that ends too. A read or write error on either
// side, or no byte moving either way for the connection's
// Timeouts.TunnelIdle, ends both. peer is closed when Tunnel returns; the
// client connection closes once the handler returns. Memory: one buffer of
// tunnelBuf per direction.
//
// The request must have no body (an Upgrade with a body is not tunnelled
// by the proxy; RFC 9110 §7.8 lets it be ignored).
func (w *ResponseWriter) Tunnel(protocol []byte, peer net.Conn, peerBuffered []byte) (TunnelStats, error) {
	c, ok := w.sink.(*conn)
	if !ok || c.inLoop || w.committed || w.aborted {
		return TunnelStats{}, ErrNoTunnel
	}
	c.stopWatch()
	w.addHeader(bytesView(upgradeName), bytesView(protocol))
	w.committed, w.status = true, 101
	// The connection is the tunnel's from now on: nothing is written or
	// read as HTTP after this request, and closing does not linger.
	w.closeConn, w.aborted = true, true
	out := appendStatusLine(c.out, 101)
	out = append(out, w.hdr...)
	out = append(out, "Connection: upgrade\r\n\r\n"...)
	c.out = out
	err := c.flush() // the responses before it go first, in order
	c.broken = true
	if err != nil {
		peer.Close()
		return TunnelStats{}, err
	}
	// The client's bytes past the request head (a first frame sent
	// without waiting for the 101) are the start of the tunnel.
	clientBuffered := c.rbuf[c.r:c.w]
	c.r = c.w
	idle := c.cfg.Timeouts.TunnelIdle
	return relay(c.st, clientBuffered, peer, peerBuffered, idle), nil
}

// tunnelSide is one end of a tunnel.
type tunnelSide interface {
	io.ReadWriter
	SetReadDeadline(time.Time) error
	SetWriteDeadline(time.Time) error
}

// tunnelState is what the two directions of a tunnel share.
type tunnelState struct {
	idle time.Duration
	// last is when a byte last moved either way (unix nanoseconds).
	last atomic.Int64
	// done: one direction failed or the tunnel went idle; the other is
	// woken by a deadline in the past.
	done    atomic.Bool
	idleEnd atomic.Bool
	a, b    tunnelSide
}

// abort ends both directions: deadlines in the past wake blocked reads
// and writes on both sides.
func (ts *tunnelState) abort() {
	if ts.done.Swap(true) {
		return
	}
	past := time.Unix(1, 0)
	ts.a.SetReadDeadline(past)
	ts.a.SetWriteDeadline(past)
	ts.b.SetReadDeadline(past)
	ts.b.SetWriteDeadline(past)
}

// relay copies client<->peer until both directions end, then closes
// peer.
func relay(client Stream, clientBuffered []byte, peer net.Conn, peerBuffered []byte, idle time.Duration) TunnelStats {
	ts := &tunnelState{idle: idle, a: client, b: peer}
	ts.last.Store(time.Now().UnixNano())
	if idle <= 0 {
		// No idle bound: the deadlines left from the HTTP exchange (the
		// head's, the upstream's response-header one) must not end it.
		var none time.Time
		client.SetReadDeadline(none)
		client.SetWriteDeadline(none)
		peer.SetReadDeadline(none)
		peer.SetWriteDeadline(none)
	}
	var st TunnelStats
	done := make(chan struct{})
	go func() {
		st.ToPeer = ts.copy(peer, client, clientBuffered)
		close(done)
	}()
	st.ToClient = ts.copy(client, peer, peerBuffered)
	<-done
	st.Idle = ts.idleEnd.Load()
	peer.Close()
	// The client's deadlines were moved by the relay; the connection
	// closes after the handler returns, with nothing more to send.
	return st
}

// copy relays src to dst, pre first, and shuts down dst's write side when
// src ends cleanly. It returns the bytes written to dst.
func (ts *tunnelState) copy(dst, src tunnelSide, pre []byte) int64 {
	var n int64
	if len(pre) > 0 {
		if !ts.write(dst, pre) {
			return 0
		}
		n += int64(len(pre))
	}
	bp := tunnelBufs.Get().(*[]byte)
	defer tunnelBufs.Put(bp)
	buf := *bp
	for {
		if ts.done.Load() {
			return n
		}
		if ts.idle > 0 {
			src.SetReadDeadline(time.Unix(0, ts.last.Load()).Add(ts.idle))
		}
		k, err := src.Read(buf)
		if k > 0 {
			ts.last.Store(time.Now().UnixNano())
			if !ts.write(dst, buf[:k]) {
				return n
			}
			n += int64(k)
		}
		if err == nil {
			continue
		}
		if err == io.EOF && !ts.done.Load() {
			// A clean end of this direction: pass it on, and let
			// the other direction run until it ends too.
			if closeWrite(dst) != nil {
				ts.abort()
			}
			return n
		}
		if isTimeout(err) && !ts.done.Load() && ts.idle > 0 {
			// Quiet this way: the tunnel is idle only if the other
			// direction was quiet too.
			if time.Since(time.Unix(0, ts.last.Load())) < ts.idle {
				continue
			}
			ts.idleEnd.Store(true)
		}
		ts.abort()
		return n
	}
}

// write sends b to dst under the idle bound (a peer that stops reading
// counts as idle) and reports success; on failure the tunnel ends.
func (ts *tunnelState) write(dst tunnelSide, b []byte) bool {
	if ts.idle > 0 {
		dst.SetWriteDeadline(time.Now().Add(ts.idle))
	}
	if _, err := dst.Write(b); err != nil {
		ts.abort()
		return false
	}
	return true
}

// closeWrite shuts down the write half of s: TCP's FIN (net.TCPConn and
// tls.Conn both have CloseWrite; tls.Conn sends close_notify), or
// close_notify on the server's own TLS streams. A side that cannot
// half-close (an in-memory pipe) gets an error, which ends the tunnel.
func closeWrite(s tunnelSide) error {
	switch v := s.(type) {
	case interface{ CloseWrite() error }:
		return v.CloseWrite()
	case tlsConnStream:
		return closeNotify(v.tlsConn())
	}
	return errNoHalfClose
}

var errNoHalfClose = errors.New("server: stream cannot half-close")

func closeNotify(tc *tls.Conn) error { return tc.CloseWrite() }

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
