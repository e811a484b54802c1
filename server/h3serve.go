package server

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quic-go/quic-go"

	"github.com/simdedge/simdedge/server/access"
	"github.com/simdedge/simdedge/server/metrics"
)

// HTTP/3 (RFC 9114) on quic-go's QUIC layer. quic-go runs the transport
// (packets, loss recovery, flow control, TLS 1.3); the framing above it is
// ours (h3conn.go, h3stream.go), so that each request stream becomes a
// Request exactly as an HTTP/2 stream does: the QPACK fields go through
// the same checks and mapping (h2decode.field, buildHead, h2map.go), the
// route is looked up once (planFor) and the plan runs as on any engine.
// Why not quic-go's http3.Server: docs/decisions/0046-http3.md.

// h3ALPN is HTTP/3's TLS protocol name (RFC 9114 §3.1).
const h3ALPN = "h3"

// HTTP3Options are one HTTP/3 listener's limits. Zero fields take the
// defaults below.
type HTTP3Options struct {
	// MaxStreams is how many request streams a client may have open at
	// once (QUIC's MAX_STREAMS, RFC 9000 §4.6): a client that opens more
	// breaks the protocol and its connection closes. A stream whose
	// handler still runs after the client reset it keeps its slot.
	MaxStreams int
	// IdleTimeout closes a connection without traffic for this long.
	IdleTimeout time.Duration
	// MaxHeaderBytes bounds a request's decoded field section
	// (SETTINGS_MAX_FIELD_SECTION_SIZE, counted as HTTP/2 counts its
	// header list); a larger one is answered 431.
	MaxHeaderBytes int
	// HandshakeTimeout bounds the QUIC and TLS handshake.
	HandshakeTimeout time.Duration
	// RetryThreshold is how many handshakes may be in flight before new
	// ones must first prove their address with a Retry token (RFC 9000
	// §8.1.2): below it a handshake costs no extra round trip; above it
	// a flood of Initials from spoofed addresses costs the server one
	// stateless packet each. Negative: always Retry.
	RetryThreshold int
	// Allow0RTT accepts early data on resumed connections. Only safe
	// methods (GET, HEAD, OPTIONS, TRACE) are served from it; any other
	// request in early data is answered 425 Too Early (RFC 8470 §5.2).
	Allow0RTT bool
	// Rules are the listener's allow and deny (ListenerPolicy.Rules): a
	// connection from a denied address is refused at its first packet,
	// as a TCP one is closed at accept, and a request from an address
	// the connection moved to (RFC 9000 §9) is checked again.
	Rules access.Rules
}

// Defaults of HTTP3Options.
const (
	// DefaultH3MaxStreams is HTTP/2's default (DefaultH2MaxConcurrentStreams)
	// and quic-go's.
	DefaultH3MaxStreams = 100
	// DefaultH3IdleTimeout is quic-go's default idle timeout.
	DefaultH3IdleTimeout = 30 * time.Second
	// DefaultH3MaxHeaderBytes is HTTP/2's header list limit.
	DefaultH3MaxHeaderBytes = DefaultH2MaxHeaderListSize
	// DefaultH3HandshakeTimeout is twice quic-go's handshake idle
	// timeout, the bound quic-go itself puts on a whole handshake.
	DefaultH3HandshakeTimeout = 10 * time.Second
	// DefaultH3RetryThreshold: a busy edge sees tens of handshakes at
	// once; hundreds not yet complete is what a spoofed flood looks like.
	DefaultH3RetryThreshold = 128
)

// WithDefaults returns o with every zero field set to its default.
func (o HTTP3Options) WithDefaults() HTTP3Options {
	o.normalize()
	return o
}

func (o *HTTP3Options) normalize() {
	if o.MaxStreams <= 0 {
		o.MaxStreams = DefaultH3MaxStreams
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = DefaultH3IdleTimeout
	}
	if o.MaxHeaderBytes <= 0 {
		o.MaxHeaderBytes = DefaultH3MaxHeaderBytes
	}
	if o.HandshakeTimeout <= 0 {
		o.HandshakeTimeout = DefaultH3HandshakeTimeout
	}
	if o.RetryThreshold == 0 {
		o.RetryThreshold = DefaultH3RetryThreshold
	}
}

// h3Registry holds the open HTTP/3 connections, for GOAWAY on Shutdown
// and StartDrain.
type h3Registry struct {
	mu    sync.Mutex
	conns map[*h3conn]struct{}
}

func (r *h3Registry) add(hc *h3conn) {
	r.mu.Lock()
	if r.conns == nil {
		r.conns = map[*h3conn]struct{}{}
	}
	r.conns[hc] = struct{}{}
	r.mu.Unlock()
}

func (r *h3Registry) remove(hc *h3conn) {
	r.mu.Lock()
	delete(r.conns, hc)
	r.mu.Unlock()
}

// goaway starts the graceful close of the HTTP/3 connections of the
// socket key (nil: all of them): Shutdown, StartDrain and a stopped
// socket call it.
func (r *h3Registry) goaway(key any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for hc := range r.conns {
		if key == nil || hc.c.lkey == key {
			hc.drain()
		}
	}
}

// H3TLSConfig adapts a TCP listener's TLS configuration for ServeHTTP3:
// ALPN h3 only (a configuration from GetConfigForClient is cloned and
// adjusted the same way at each handshake) and TLS 1.3, which QUIC
// requires. Session ticket keys are those of tc when it is called: a
// server that rotates them gives ServeHTTP3 a configuration that rotates
// too (edgetls.Store.QUICConfig).
func H3TLSConfig(tc *tls.Config) *tls.Config {
	c := tc.Clone()
	c.NextProtos = []string{h3ALPN}
	c.MinVersion = tls.VersionTLS13
	if get := tc.GetConfigForClient; get != nil {
		c.GetConfigForClient = func(hi *tls.ClientHelloInfo) (*tls.Config, error) {
			pc, err := get(hi)
			if err != nil || pc == nil {
				return pc, err
			}
			pc = pc.Clone()
			pc.NextProtos = []string{h3ALPN}
			pc.MinVersion = tls.VersionTLS13
			return pc, nil
		}
	}
	return c
}

// ServeHTTP3 serves HTTP/3 on pc (a UDP socket, or any net.PacketConn: a
// kernel-bypass transport plugs in here) with the TLS configuration tc,
// which must offer h3 by ALPN (edgetls.Store.QUICConfig, or H3TLSConfig),
// until the server shuts down or pc is stopped (StopListener(pc)). Every request goes through the server's
// router like an HTTP/1.1 or HTTP/2 one. It does not close pc.
func (s *Server) ServeHTTP3(pc net.PacketConn, tc *tls.Config, o HTTP3Options) error {
	o.normalize()
	var err error
	lst := s.opts.Metrics.Listener(pc.LocalAddr().String())
	hs := &h3Shakes{limit: int64(o.RetryThreshold), rules: &o.Rules, srv: s, slots: newStreamSlots(), lst: lst}
	tr := &quic.Transport{
		Conn: pc,
		VerifySourceAddress: func(net.Addr) bool {
			if hs.n.Load() >= hs.limit {
				lst.HTTP3(0, metrics.H3Retry)
				return true
			}
			return false
		},
		ConnContext: hs.begin,
	}
	qc := &quic.Config{
		HandshakeIdleTimeout:  o.HandshakeTimeout / 2,
		MaxIdleTimeout:        o.IdleTimeout,
		MaxIncomingStreams:    int64(o.MaxStreams),
		MaxIncomingUniStreams: h3MaxUniStreams,
		Allow0RTT:             o.Allow0RTT,
	}
	var ln h3Listener
	if o.Allow0RTT {
		ln, err = tr.ListenEarly(tc, qc)
	} else {
		// Without 0-RTT a connection is handed over once its handshake
		// is complete: no request is served before the client's
		// address and Finished are confirmed.
		ln, err = tr.Listen(tc, qc)
	}
	if err != nil {
		tr.Close()
		return err
	}
	if !s.trackHeld(pc, ln.Close) {
		ln.Close()
		tr.Close()
		return ErrServerClosed
	}
	defer s.active.Done()
	defer s.untrack(pc)
	var conns sync.WaitGroup
	defer func() {
		// The connections drain (GOAWAY, their streams end) before the
		// transport under them goes.
		s.h3.goaway(pc)
		conns.Wait()
		tr.Close()
	}()
	defer ln.Close()
	for {
		c, err := ln.Accept(context.Background())
		if err != nil {
			if s.closing.Load() || errors.Is(err, quic.ErrServerClosed) || errors.Is(err, net.ErrClosed) {
				if s.wasStopped(pc) {
					return ErrListenerStopped
				}
				return ErrServerClosed
			}
			return err
		}
		hs.accepted(c)
		// MaxConnsPerIP counts QUIC connections with the TCP ones
		// (admit.go): over its address's share, a connection is
		// refused once its handshake is done (its address proven).
		ip, counted := clientKey(c.RemoteAddr())
		if counted && !s.ips.acquire(ip, s.settings().Limits.MaxConnsPerIP) {
			lst.Refused(0, metrics.RefusedPerIP)
			c.CloseWithError(h3ExcessiveLoad, "")
			continue
		}
		hc := newH3conn(s, c, &o, pc)
		hc.c.ip, hc.c.ipHeld = ip, counted
		hc.c.countOpen(lst)
		lst.HTTP3(hc.c.shard, metrics.H3Conn)
		s.addConn(hc.c)
		s.h3.add(hc)
		conns.Add(1)
		go func() {
			defer conns.Done()
			hc.serve()
			s.h3.remove(hc)
			s.removeConn(hc.c)
		}()
	}
}

// h3Listener is quic-go's Listener or EarlyListener.
type h3Listener interface {
	Accept(context.Context) (*quic.Conn, error)
	Close() error
}

// h3MaxUniStreams: a client needs three (control, QPACK encoder and
// decoder); a few more leave room for extensions, which are refused.
const h3MaxUniStreams = 8

// h3Shakes admits the connections of one listener when quic-go creates
// them (ConnContext, at the client's first Initial packet) and counts
// the handshakes in flight, for the Retry threshold: one begins there and
// ends when it is accepted or its context ends (handshake failed or timed
// out, connection closed), whichever comes first.
//
// Each connection also takes one of the listener's Limits.MaxConns slots
// there, for as long as quic-go holds its state (to the end of its
// context), so that handshakes in flight count as well as served
// connections. At the limit a new connection is refused with
// CONNECTION_REFUSED (RFC 9000 §20.1) before any state is kept, where a
// TCP accept waits or closes an idle connection (admit.go): QUIC has no
// backlog to wait in, the check runs on quic-go's packet loop, which must
// not block, and an HTTP/3 client has the listener's HTTP/1.1 and HTTP/2
// to fall back on (Alt-Svc is a hint). With the Retry threshold below
// MaxConns, spoofed Initials take at most that many slots, each for at
// most a handshake timeout.
type h3Shakes struct {
	n     atomic.Int64
	limit int64
	rules *access.Rules
	srv   *Server
	slots *streamSlots
	lst   *metrics.Listener
}

var (
	// errH3Denied refuses a connection from an address the listener's
	// rules deny (quic-go answers CONNECTION_REFUSED).
	errH3Denied = errors.New("server: address denied")
	// errH3Full refuses a connection while the listener holds
	// Limits.MaxConns (CONNECTION_REFUSED too).
	errH3Full = errors.New("server: http3 listener at max conns")
)

type h3ShakeKey struct{}

// h3Shake is one handshake's count, given back once.
type h3Shake struct {
	hs   *h3Shakes
	done atomic.Bool
}

func (sh *h3Shake) end() {
	if !sh.done.Swap(true) {
		sh.hs.n.Add(-1)
	}
}

func (hs *h3Shakes) begin(ctx context.Context, ci *quic.ClientInfo) (context.Context, error) {
	if hs.rules.Active() && hs.rules.Check(addrIP(ci.RemoteAddr)) == access.Denied {
		return nil, errH3Denied
	}
	if !hs.slots.tryTake(int64(hs.srv.settings().Limits.MaxConns)) {
		// Counted per Initial packet refused (no state is kept to
		// know the client again): a first flight may take two.
		hs.lst.Refused(0, metrics.RefusedMaxConns)
		return nil, errH3Full
	}
	context.AfterFunc(ctx, hs.slots.release)
	sh := &h3Shake{hs: hs}
	hs.n.Add(1)
	context.AfterFunc(ctx, sh.end)
	return context.WithValue(ctx, h3ShakeKey{}, sh), nil
}

func (hs *h3Shakes) accepted(c *quic.Conn) {
	if sh, ok := c.Context().Value(h3ShakeKey{}).(*h3Shake); ok {
		sh.end()
	}
}
