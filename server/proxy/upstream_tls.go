package proxy

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"time"
)

// TLS to upstreams (https targets). Every dial of a TLS upstream's target
// is a tls.Client handshake, bounded together with the TCP connect by the
// connect timeout; a failed handshake (an unknown CA, a wrong name, a
// refused client certificate) is a connect failure for the policy: nothing
// was sent, so it fails over, and the log names the reason. Pooled
// connections are tls.Conns, kept alive and reused like plain ones.
//
// TLS upstreams are proxied on goroutines on every engine (LoopProxy hands
// them off): the event loop drives only non-blocking plain sockets, and a
// handshake, and the record layer after it, would block it. A loop-driven
// record layer (crypto/tls over the loop's buffers) could lift this later.

// targetSessions is the size of a target's session cache. crypto/tls keys
// sessions by the server name, which every target of an upstream shares
// (server_name), so one cache per upstream would hold a single ticket that
// the other targets cannot decrypt: each target has its own cache, and
// holds just that one key.
const targetSessions = 1

// targetTLS is base for the target at addr: its host as ServerName unless
// base names one, and a session cache of its own.
func targetTLS(base *tls.Config, addr string) *tls.Config {
	c := base.Clone()
	if c.ServerName == "" {
		if host, _, err := net.SplitHostPort(addr); err == nil {
			c.ServerName = host
		}
	}
	c.ClientSessionCache = tls.NewLRUClientSessionCache(targetSessions)
	return c
}

// tlsConf is the i-th target's TLS config, nil without TLS.
func (u *Upstream) tlsConf(i int) *tls.Config {
	if i < len(u.tlsConfs) {
		return u.tlsConfs[i]
	}
	return nil
}

// dialTLS connects and completes the handshake within connect.
func (t *target) dialTLS(cfg *tls.Config, connect time.Duration) (*upConn, error) {
	tc, err := dialTLSContext(context.Background(), t.addr, cfg, connect)
	if err != nil {
		return nil, &dialError{err}
	}
	// The probe peeks at the TCP socket under the record layer: a
	// close_notify or a FIN queued there makes the connection unusable.
	return &upConn{t: t, nc: tc, buf: make([]byte, upstreamReadBuf), fresh: true, probe: newProber(tc.NetConn()), tlsc: cfg}, nil
}

// handshakeError is a TLS handshake that failed after the TCP connect
// succeeded: the target is listening, so this is not "refused" (the pool
// is not down, and a Retry-After would mislead). The request gets 502, as
// from nginx; for the policy it stays a connect failure (nothing was
// sent: it fails over, and passive health counts it).
type handshakeError struct{ err error }

func (e *handshakeError) Error() string { return "proxy: upstream tls handshake: " + e.err.Error() }
func (e *handshakeError) Unwrap() error { return e.err }

// handshakeFailed reports whether err is a failed TLS handshake.
func handshakeFailed(err error) bool {
	var he *handshakeError
	return errors.As(err, &he)
}

// dialTLSContext dials addr and completes a handshake with cfg, all
// within timeout and ctx. A handshake failure is a *handshakeError.
func dialTLSContext(ctx context.Context, addr string, cfg *tls.Config, timeout time.Duration) (*tls.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	tc := tls.Client(nc, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		nc.Close()
		if timeoutError(err) || ctx.Err() != nil {
			return nil, err // a timeout, as a slow connect
		}
		return nil, &handshakeError{err}
	}
	return tc, nil
}
