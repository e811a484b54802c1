package server

import (
	"crypto/tls"
	"errors"
	"net"
	"sync/atomic"
	"time"

	"github.com/simdedge/simdedge/server/metrics"
)

// TLSOptions terminate TLS on a listener (ServeTLS). The policy (which
// certificate, versions, suites, client certificates, ticket keys) lives in
// Config; package edgetls builds it from the configuration and reloads it
// behind Config.GetConfigForClient.
type TLSOptions struct {
	Config *tls.Config
	// HandshakeTimeout bounds the first byte and the handshake together;
	// zero means defaultHandshakeTimeout.
	HandshakeTimeout time.Duration
}

// defaultHandshakeTimeout mirrors edgetls.DefaultHandshakeTimeout for
// library users who build their own tls.Config.
const defaultHandshakeTimeout = 10 * time.Second

// Errors of a TLS connection before its handshake; they end the connection
// (the server answers nothing more, as for any stream error).
var (
	ErrPlainHTTPOnTLS = errors.New("server: plain HTTP request sent to a TLS listener")
	ErrNotTLS         = errors.New("server: connection does not start with a TLS handshake record")
)

// ServeTLS serves the kernel TCP listener l with TLS terminated by o, until
// l fails or the server shuts down (see ServeStream).
//
// On the goroutine engine each connection is served on its own goroutine:
// the handshake runs there, under its timeout, at the first read. On the
// loop engine the handshake runs on a goroutine too, and the event loop
// then drives crypto/tls over the connection's buffers (looptls_linux.go;
// docs/decisions/0024-loop-tls.md), unless SIMDEDGE_LOOP_TLS=off serves the
// listener on goroutines as the goroutine engine does (kept to measure the
// two designs against each other).
func (s *Server) ServeTLS(l net.Listener, e Engine, o TLSOptions) error {
	if o.HandshakeTimeout <= 0 {
		o.HandshakeTimeout = defaultHandshakeTimeout
	}
	if e == EngineLoop && loopTLSOn() {
		return s.serveLoopTLS(l, o)
	}
	return s.ServeStream(s.newTLSListener(l, o))
}

// newTLSListener wraps l; its handshakes count on the listener's counters.
func (s *Server) newTLSListener(l net.Listener, o TLSOptions) tlsListener {
	return tlsListener{Listener: l, o: o, set: s.opts.Metrics, m: s.opts.Metrics.Listener(l.Addr().String())}
}

// tlsConnStream is a Stream that carries TLS (tlsStream on goroutines,
// loopTLS on the loop).
type tlsConnStream interface {
	tlsConn() *tls.Conn
}

func (t *tlsStream) tlsConn() *tls.Conn { return t.tc }

type tlsListener struct {
	net.Listener
	o TLSOptions
	// set and m count handshakes (nil: metrics off).
	set *metrics.Set
	m   *metrics.Listener
}

// Accept returns the connection without a handshake: the handshake runs
// on the connection's own goroutine, so a slow client never holds up
// accepting the next one.
func (l tlsListener) Accept() (Stream, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	t := &tlsStream{raw: c, o: &l.o, m: l.m}
	if l.m != nil {
		t.shard = l.set.Shard()
	}
	return t, nil
}

// tlsStream is a TLS server connection whose handshake runs at the first
// Read or Write, on the serving goroutine, bounded by the handshake
// timeout. The server's own read and write deadlines are recorded and
// applied once the handshake is done, so its idle and header timeouts
// start after it.
type tlsStream struct {
	raw net.Conn
	o   *TLSOptions
	tc  *tls.Conn
	// readDL and writeDL are the deadlines the server last asked for,
	// in unix nanoseconds (0: none). Shutdown sets the read deadline
	// from another goroutine, hence atomics.
	readDL, writeDL atomic.Int64
	done            bool // the handshake has run (successfully or not)
	err             error
	// m and shard count the handshake's outcome (nil: metrics off).
	m     *metrics.Listener
	shard int
}

func (t *tlsStream) Read(p []byte) (int, error) {
	if !t.done {
		if err := t.handshake(); err != nil {
			return 0, err
		}
	}
	return t.tc.Read(p)
}

func (t *tlsStream) Write(p []byte) (int, error) {
	if !t.done {
		if err := t.handshake(); err != nil {
			return 0, err
		}
	}
	return t.tc.Write(p)
}

// Close sends close_notify after a completed handshake (crypto/tls bounds
// that write), then closes the socket.
func (t *tlsStream) Close() error {
	if t.tc != nil && t.done && t.err == nil {
		return t.tc.Close()
	}
	return t.raw.Close()
}

func (t *tlsStream) SetReadDeadline(d time.Time) error {
	t.readDL.Store(unixNano(d))
	return t.raw.SetReadDeadline(d)
}

func (t *tlsStream) SetWriteDeadline(d time.Time) error {
	t.writeDL.Store(unixNano(d))
	return t.raw.SetWriteDeadline(d)
}

func (t *tlsStream) RemoteAddr() net.Addr { return t.raw.RemoteAddr() }
func (t *tlsStream) LocalAddr() net.Addr  { return t.raw.LocalAddr() }

func unixNano(d time.Time) int64 {
	if d.IsZero() {
		return 0
	}
	return d.UnixNano()
}

func fromUnixNano(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n)
}

// handshake sniffs the first bytes, then runs the TLS handshake under the
// handshake timeout, and restores the server's deadlines. A deadline the
// server set meanwhile (Shutdown waking idle connections) is restored too,
// so the next read sees it.
func (t *tlsStream) handshake() error {
	t.done = true
	t.raw.SetDeadline(time.Now().Add(t.o.HandshakeTimeout))
	var first [sniffBytes]byte
	tc, outcome, err := shakeTLS(t.raw, first[:], t.o.Config, func(n int) net.Conn {
		return &prefixConn{Conn: t.raw, pre: first[:n]}
	})
	t.m.TLSHandshake(t.shard, outcome)
	if err != nil {
		t.err = err
		return err
	}
	t.tc = tc
	t.raw.SetReadDeadline(fromUnixNano(t.readDL.Load()))
	t.raw.SetWriteDeadline(fromUnixNano(t.writeDL.Load()))
	return nil
}

// shakeTLS is the start of a TLS connection, the same on both engines
// (tlsStream.handshake, loopTLS.shake): the first read into buf (at most
// sniffBytes), the sniff, the plain-text answer to plain HTTP, the
// handshake over wire(n), which must replay buf[:n] before reading raw
// again, and the lingering close after a failed handshake so that the
// client reads the alert. It returns the tls.Conn, the outcome to count
// (metrics.TLSOK...) and, unless that is TLSOK, the error. raw's deadline
// bounds it all.
func shakeTLS(raw net.Conn, buf []byte, cfg *tls.Config, wire func(n int) net.Conn) (*tls.Conn, int, error) {
	n, err := raw.Read(buf[:min(len(buf), sniffBytes)])
	if err != nil {
		return nil, metrics.TLSFailed, err
	}
	switch sniff(buf[:n]) {
	case sniffTLS:
	case sniffHTTP:
		answerPlainHTTP(raw)
		return nil, metrics.TLSPlainHTTP, ErrPlainHTTPOnTLS
	default:
		return nil, metrics.TLSNotTLS, ErrNotTLS
	}
	tc := tls.Server(wire(n), cfg)
	if err := tc.Handshake(); err != nil {
		lingerHandshake(raw, err) // so that the alert is read
		return nil, metrics.TLSFailed, err
	}
	return tc, metrics.TLSOK, nil
}

// prefixConn replays the sniffed bytes before reading the socket again.
type prefixConn struct {
	net.Conn
	pre []byte
}

func (p *prefixConn) Read(b []byte) (int, error) {
	if len(p.pre) > 0 {
		n := copy(b, p.pre)
		p.pre = p.pre[n:]
		return n, nil
	}
	return p.Conn.Read(b)
}

// CloseWrite sends the socket's FIN (a lingering close, after crypto/tls's
// close_notify: halfClose).
func (p *prefixConn) CloseWrite() error { return rawCloseWrite(p.Conn) }

// TLS reports whether the request arrived over TLS: X-Forwarded-Proto is
// "https" for it. A type check on the connection's stream, no allocation.
func (r *Request) TLS() bool {
	if r.c == nil {
		return false
	}
	_, ok := r.c.st.(tlsConnStream)
	return ok
}

// TLSConnectionState returns the negotiated TLS parameters (version,
// suite, ALPN, SNI, client certificates) and true, or false for a request
// that did not arrive over TLS.
func (r *Request) TLSConnectionState() (tls.ConnectionState, bool) {
	if r.c == nil {
		return tls.ConnectionState{}, false
	}
	if h, ok := r.c.st.(h3connStream); ok {
		return h.qc.ConnectionState().TLS, true
	}
	t, ok := r.c.st.(tlsConnStream)
	if !ok || t.tlsConn() == nil {
		return tls.ConnectionState{}, false
	}
	return t.tlsConn().ConnectionState(), true
}
