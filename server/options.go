package server

import (
	"log/slog"
	"time"

	phttp "github.com/simdedge/simdedge/parse/http"
	"github.com/simdedge/simdedge/server/access"
	"github.com/simdedge/simdedge/server/accesslog"
	"github.com/simdedge/simdedge/server/metrics"
	"github.com/simdedge/simdedge/server/pathnorm"
)

// Default limits and timeouts. Unlike net/http and fasthttp, every timeout
// has a finite default: a client that sends its head slowly is dropped after
// DefaultReadHeaderTimeout (the slow-header attack, see FACTS.md).
const (
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultIdleTimeout       = 60 * time.Second
	DefaultWriteTimeout      = 30 * time.Second
	DefaultDrainTimeout      = 15 * time.Second
	// DefaultBodyMinRate and DefaultBodyRateWindow: see bodyrate.go.
	DefaultBodyMinRate    = 1 << 10
	DefaultBodyRateWindow = 10 * time.Second
	// DefaultTunnelIdleTimeout bounds a tunnel after a 101 (WebSocket)
	// in which no byte moves either way. An hour, as Envoy's connection
	// idle_timeout and HAProxy's documented `timeout tunnel 1h`: nginx's
	// 60 s proxy_read_timeout is the classic cause of WebSockets dropped
	// between an application's pings, while TCP keep-alive (15 s probes,
	// Go's default) already finds peers that vanished.
	DefaultTunnelIdleTimeout = time.Hour

	DefaultMaxBodyBytes = 10 << 20
	DefaultMaxConns     = 10000
)

// Limits bounds what one client may make the server hold.
type Limits struct {
	// MaxRequestLine, MaxHeaderBytes and MaxHeaders are the parser's
	// limits (parse/http.Options); zero means its defaults. Beyond them
	// the answer is 414 or 431 and the connection closes.
	MaxRequestLine int
	MaxHeaderBytes int
	MaxHeaders     int
	// MaxBodyBytes bounds a request body (413 beyond it); zero means
	// DefaultMaxBodyBytes, a negative value no limit.
	MaxBodyBytes int64
	// MaxConns bounds the connections served at once per Serve call; the
	// accept loop waits for a free slot (the kernel backlog holds the
	// rest). Zero means DefaultMaxConns, negative no limit. At the limit
	// an idle keep-alive connection of the same Serve call is closed to
	// admit a new one (admit.go).
	MaxConns int
	// MaxConnsPerIP bounds the connections of one client address (an
	// IPv6 client is its /64) over every listener of the Server; a
	// connection beyond it is closed when accepted. Zero means
	// DefaultMaxConnsPerIP(MaxConns), negative no limit.
	MaxConnsPerIP int
}

// Timeouts of a connection. Zero means the default; a negative value
// disables the timeout.
type Timeouts struct {
	// ReadHeader bounds the time from the first byte of a request head
	// to its end. On a new connection it bounds the wait for the first
	// request and its head together, from the accept: a connection that
	// has not yet sent a request gets less time than an established one
	// (Idle, then ReadHeader).
	ReadHeader time.Duration
	// Idle bounds the wait for the next request on a keep-alive
	// connection, and each read of a request body (a body that stalls
	// longer is abandoned). The deadline is refreshed lazily: a
	// connection is closed after between 3/4 Idle and Idle of silence,
	// which saves a timer update per request (see conn.setReadDeadline).
	Idle time.Duration
	// Write bounds each write of response bytes to the client (lazily,
	// as Idle: a write gets between 3/4 Write and Write).
	Write time.Duration
	// Drain bounds Shutdown when its context has no deadline.
	Drain time.Duration
	// BodyMinRate (bytes per second) and BodyRateWindow bound a request
	// body as a whole, which Idle cannot: a client trickling a byte now
	// and then restarts Idle at every byte. From the first wait for body
	// bytes, the body may take BodyRateWindow plus one second for every
	// BodyMinRate bytes received; a body that falls behind is answered
	// 408 and the connection closes (Apache's mod_reqtimeout MinRate).
	// The clock runs while the handler is not reading too, so a handler
	// that reads a body slower than this on purpose should lower it.
	// Zero means DefaultBodyMinRate (1 KiB/s) and DefaultBodyRateWindow
	// (10 s); a negative value in either disables the check.
	BodyMinRate    int64
	BodyRateWindow time.Duration
	// TunnelIdle ends a tunnel after a 101 (ResponseWriter.Tunnel) in
	// which no byte moved either way for this long. Zero means
	// DefaultTunnelIdleTimeout.
	TunnelIdle time.Duration
}

// Options configures a Server.
type Options struct {
	// Handler serves every request. It must not be nil.
	Handler  Handler
	Limits   Limits
	Timeouts Timeouts
	// Logger receives connection-level events (handler panics, accept
	// errors). Nil means slog.Default().
	Logger *slog.Logger
	// AllowBareLF relaxes the parser (see parse/http.Options). Off by
	// default: parsers that disagree on line ends are a smuggling vector.
	AllowBareLF bool
	// Paths is how request paths are normalised before the handler
	// sees them (server/pathnorm; the zero value normalises: dot
	// segments removed, unreserved escapes decoded, slashes merged).
	// Server.SetPaths replaces it at run time; a listener may have its
	// own (SetListenerPaths).
	Paths pathnorm.Options
	// LoopProxy lets the event-loop engine forward the requests whose
	// plan's action (plan.go) implements LoopProxier itself, over non-blocking
	// upstream connections in its epoll set, instead of handing their
	// connections to goroutines. The goroutine engine ignores it.
	LoopProxy bool
	// Metrics, when set, receives the counts of requests (into the
	// request's plan's route counters, Plan.Metrics, else Unmatched), connections
	// and parse errors (metrics.go). Nil counts nothing and takes no clock
	// reads for it.
	Metrics *metrics.Set
	// TrustedProxies are the peers whose X-Forwarded-For is believed
	// (Request.ClientIP), whose X-Forwarded-For the proxy extends instead
	// of replacing, and who may send PROXY protocol headers (listener.go).
	// Nil trusts nobody. Server.SetTrustedProxies replaces it at run time.
	TrustedProxies *access.Prefixes

	// HTTP2 bounds HTTP/2 connections (h2 by ALPN on TLS listeners, h2c
	// on listeners given to EnableH2C); see HTTP2Limits. Read when a
	// connection starts HTTP/2.
	HTTP2 HTTP2Limits
	// AccessLog, when set, gets one line per request (observe.go,
	// server/accesslog). The caller opens and closes it.
	AccessLog *accesslog.Log
	// RequestID and Trace: request IDs and W3C trace context
	// (observe.go). Zero: off.
	RequestID RequestIDOptions
	Trace     TraceOptions
}

func orDefault(d, def time.Duration) time.Duration {
	switch {
	case d == 0:
		return def
	case d < 0:
		return 0
	}
	return d
}

func (o *Options) normalize() {
	t := &o.Timeouts
	t.ReadHeader = orDefault(t.ReadHeader, DefaultReadHeaderTimeout)
	t.Idle = orDefault(t.Idle, DefaultIdleTimeout)
	t.Write = orDefault(t.Write, DefaultWriteTimeout)
	t.Drain = orDefault(t.Drain, DefaultDrainTimeout)
	t.TunnelIdle = orDefault(t.TunnelIdle, DefaultTunnelIdleTimeout)
	t.normalizeBodyRate()
	l := &o.Limits
	if l.MaxHeaderBytes <= 0 {
		l.MaxHeaderBytes = phttp.DefaultMaxHeaderBytes
	}
	if l.MaxRequestLine <= 0 {
		l.MaxRequestLine = phttp.DefaultMaxRequestLine
	}
	if l.MaxHeaders <= 0 {
		l.MaxHeaders = phttp.DefaultMaxHeaders
	}
	switch {
	case l.MaxBodyBytes == 0:
		l.MaxBodyBytes = DefaultMaxBodyBytes
	case l.MaxBodyBytes < 0:
		l.MaxBodyBytes = 0 // the decoders' "no limit"
	}
	switch {
	case l.MaxConns == 0:
		l.MaxConns = DefaultMaxConns
	case l.MaxConns < 0:
		l.MaxConns = 0
	}
	switch {
	case l.MaxConnsPerIP == 0:
		l.MaxConnsPerIP = DefaultMaxConnsPerIP(l.MaxConns)
	case l.MaxConnsPerIP < 0:
		l.MaxConnsPerIP = 0
	}
	o.HTTP2.normalize()
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
}
