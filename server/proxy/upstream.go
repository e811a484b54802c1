package proxy

import (
	"crypto/tls"
	"errors"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	phttp "github.com/simdedge/simdedge/parse/http"
	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/upstream"
)

// Defaults of an Upstream.
const (
	DefaultConnectTimeout        = upstream.DefaultConnectTimeout
	DefaultResponseHeaderTimeout = upstream.DefaultResponseHeaderTimeout
	// DefaultIdleConnTimeout is below the keep-alive timeouts of common
	// origins (nginx 75 s, Apache 5 s is the exception), so the proxy
	// rarely reuses a connection the origin is about to close.
	DefaultIdleConnTimeout  = 60 * time.Second
	DefaultMaxIdlePerTarget = 256
)

// UpstreamOptions configures an Upstream. Zero durations mean the
// defaults.
type UpstreamOptions struct {
	Name string
	// Targets are "host:port" addresses of stream (kernel TCP) targets,
	// or, with MessageTargets, the names of those (for logs and for the
	// Host field of HTTP/1.0 requests that lack one).
	Targets []string
	// MessageTargets, when set, are the upstream's targets (one per name
	// in Targets): requests go to them as messages. An upstream is all
	// stream or all message targets. Close closes them.
	MessageTargets []MessageTarget
	// ConnectTimeout bounds a dial (504 beyond it); it overrides
	// Policy.Timeouts.Connect when set.
	ConnectTimeout time.Duration
	// ResponseHeaderTimeout bounds the wait for the response head after
	// the request was sent (504 beyond it), and each read of the body;
	// it overrides Policy.Timeouts.ResponseHeader when set.
	ResponseHeaderTimeout time.Duration
	// IdleConnTimeout: pooled connections idle longer are closed instead
	// of reused.
	IdleConnTimeout  time.Duration
	MaxIdlePerTarget int
	// MaxResponseHeaderBytes bounds an upstream response head; zero means
	// parse/http's default.
	MaxResponseHeaderBytes int
	// Policy is the pool's policy (server/upstream): balance, health,
	// retries, timeouts, connection cap. Its Targets, when empty, are
	// Targets with weight 1; when set they must name the same addresses
	// in the same order (they carry the weights). Name, OnChange and
	// Previous are set by NewUpstream.
	Policy upstream.Options
	// Active, when set, configures active health checks (Start runs
	// them): an HTTP/1.1 GET of Active.Path over a new connection
	// (stream targets) or a message round trip (message targets).
	Active *upstream.ActiveOptions
	// TLS, when set, makes every stream target an https target
	// (upstream_tls.go): connections are dialed with a copy of it per
	// target (ServerName defaults to the target's host, and each target
	// has its own session cache, so pooled new connections resume).
	// TLS upstreams are proxied on goroutines: LoopProxy hands them off.
	TLS *tls.Config
	// SendProxyProtocol, 1 or 2, sends a PROXY protocol header of that
	// version before each request (sendproxy.go); 0 sends none.
	SendProxyProtocol int
	// HTTP2 makes the targets HTTP/2 ones (h2up.go): h2c (prior
	// knowledge over TCP), or h2 over TLS with ALPN when TLS is set.
	// They are proxied on goroutines on every engine.
	HTTP2 bool
	// Previous is the upstream this one replaces on a reload: targets at
	// the same address keep their health, their counters and their idle
	// connections (and, for message targets, their open transport: the
	// one given in MessageTargets is closed).
	Previous *Upstream
}

// Upstream is a named pool of targets. It is safe for concurrent use, and
// holds idle connections until Close.
type Upstream struct {
	opts    UpstreamOptions
	pool    *upstream.Pool
	targets []*target
	// messages: the targets are MessageTargets.
	messages bool
	parser   *phttp.Parser
	closed   atomic.Bool
	// loopable: every target is an IP address (the event loop may
	// proxy to it, see Proxy.LoopProxy).
	loopable bool
	// to are the pool's timeouts (defaults filled); connect and header
	// are two of them, loopTO them as the event loop takes them.
	to              upstream.Timeouts
	connect, header time.Duration
	loopTO          server.LoopTimeouts
	checkMu         sync.Mutex
	checker         *upstream.Checker
	// tlsConfs are the targets' TLS configs (nil without TLS), in
	// target order; Start gives them to kept targets.
	tlsConfs []*tls.Config
	// h2 is the HTTP/2 side of h2c:// and h2:// upstreams (h2up.go).
	h2 *h2Up
}

// ErrNoTargets is returned by NewUpstream for an empty target list.
var ErrNoTargets = errors.New("proxy: upstream has no targets")

// errPolicyTargets: Policy.Targets do not match Targets.
var errPolicyTargets = errors.New("proxy: policy targets differ from the upstream's targets")

// NewUpstream returns an Upstream over o.Targets.
func NewUpstream(o UpstreamOptions) (*Upstream, error) {
	if len(o.Targets) == 0 {
		return nil, ErrNoTargets
	}
	if o.IdleConnTimeout <= 0 {
		o.IdleConnTimeout = DefaultIdleConnTimeout
	}
	if o.MaxIdlePerTarget <= 0 {
		o.MaxIdlePerTarget = DefaultMaxIdlePerTarget
	}
	u := &Upstream{opts: o, parser: phttp.NewParser(phttp.Options{MaxHeaderBytes: o.MaxResponseHeaderBytes})}
	if o.MessageTargets != nil {
		if len(o.MessageTargets) != len(o.Targets) {
			return nil, ErrMixedTargets
		}
		u.messages = true
	}
	po := o.Policy
	po.Name = o.Name
	if len(po.Targets) == 0 {
		for _, a := range o.Targets {
			po.Targets = append(po.Targets, upstream.TargetSpec{Address: a})
		}
	} else if len(po.Targets) != len(o.Targets) {
		return nil, errPolicyTargets
	}
	for i, a := range o.Targets {
		if po.Targets[i].Address != a {
			return nil, errPolicyTargets
		}
	}
	if o.ConnectTimeout > 0 {
		po.Timeouts.Connect = o.ConnectTimeout
	}
	if o.ResponseHeaderTimeout > 0 {
		po.Timeouts.ResponseHeader = o.ResponseHeaderTimeout
	}
	if o.Previous != nil && o.Previous.messages == u.messages {
		// Stream and message targets never share state, even at the
		// same name.
		po.Previous = o.Previous.pool
	}
	po.OnChange = u.changed
	pool, err := upstream.New(po)
	if err != nil {
		return nil, err
	}
	u.pool = pool
	u.to = pool.Options().Timeouts
	u.connect, u.header = u.to.Connect, u.to.ResponseHeader
	u.loopTO = server.LoopTimeouts{Connect: u.to.Connect, Header: u.to.ResponseHeader,
		Idle: o.IdleConnTimeout, MaxIdle: o.MaxIdlePerTarget}
	if q := pool.Queue(); q != nil {
		u.loopTO.Queue = q.Timeout()
	}
	for i, a := range o.Targets {
		if !u.messages {
			if _, _, err := net.SplitHostPort(a); err != nil {
				return nil, err
			}
		} else if o.MessageTargets[i] == nil {
			return nil, ErrMixedTargets
		}
	}
	if o.HTTP2 && !u.messages {
		if o.TLS != nil {
			c := o.TLS.Clone()
			c.NextProtos = []string{"h2"} // ALPN (RFC 9113 §3.2)
			o.TLS = c
		}
		u.h2 = newH2Up(o)
	}
	for i, a := range o.Targets {
		ut := pool.Targets()[i]
		nt := &target{addr: a, ut: ut}
		if u.messages {
			nt.mt = o.MessageTargets[i]
		} else {
			if o.TLS != nil {
				u.tlsConfs = append(u.tlsConfs, targetTLS(o.TLS, a))
				nt.tlsc.Store(u.tlsConfs[i])
			}
			if ap, err := netip.ParseAddrPort(a); err == nil {
				// An IP address: the event loop may connect to it
				// without a (blocking) name lookup.
				nt.ap, nt.apOK = ap, true
			}
		}
		// A target kept from the previous upstream keeps its idle
		// connections (and its message transport).
		t, _ := ut.CompareAndSetSlot(nt).(*target)
		if t != nt && u.messages && nt.mt != t.mt {
			nt.mt.Close()
		}
		// A kept target stays with the previous upstream until Start
		// (the reload commits): if this upstream is discarded, it is
		// not closed with it.
		t.owner.CompareAndSwap(nil, u)
		u.targets = append(u.targets, t)
	}
	if u.h2 != nil {
		for _, t := range u.targets {
			u.h2.byAddr[t.addr] = t // read-only from here on
		}
	}
	// The loop cannot do a blocking handshake: TLS upstreams stay on
	// goroutines (upstream_tls.go).
	u.loopable = !u.messages && o.TLS == nil && o.SendProxyProtocol == 0 && u.h2 == nil
	for _, t := range u.targets {
		u.loopable = u.loopable && t.apOK
	}
	return u, nil
}

// Name is the upstream's name.
func (u *Upstream) Name() string { return u.opts.Name }

// Pool is the upstream's policy (selection, health, retries), for
// metrics and tests.
func (u *Upstream) Pool() *upstream.Pool { return u.pool }

// targetOf is the proxy's side of a selected target.
func targetOf(ut *upstream.Target) *target {
	t, _ := ut.Slot().(*target)
	return t
}

// changed is the pool's OnChange hook: the idle connections of a target
// that became unavailable are closed (they would go stale while it is
// out, and an ejected origin may be restarting).
func (u *Upstream) changed(ut *upstream.Target) {
	if ut.Available() {
		return
	}
	if t := targetOf(ut); t != nil {
		t.closeIdle()
	}
}

// Start takes over the targets kept from Previous (their idle
// connections now follow this upstream's settings, and Previous's Close
// leaves them open) and starts the active health checks, if configured
// (Active). Checks run on their own goroutines, never on an event loop;
// Close stops them. A reload stops the previous upstream's checks first
// (StopChecks), so no target is probed twice.
func (u *Upstream) Start() {
	for i, t := range u.targets {
		t.owner.Store(u)
		if !u.messages {
			// Idle connections dialed with another TLS config (or
			// none) are closed when next taken (target.get).
			t.tlsc.Store(u.tlsConf(i))
		}
	}
	if u.opts.Active == nil {
		return
	}
	u.checkMu.Lock()
	defer u.checkMu.Unlock()
	if u.checker == nil && !u.closed.Load() {
		u.checker = u.pool.StartChecks(*u.opts.Active, u.probe)
	}
}

// StopChecks stops the active checks (verdicts stay); Start restarts
// them.
func (u *Upstream) StopChecks() {
	u.checkMu.Lock()
	c := u.checker
	u.checker = nil
	u.checkMu.Unlock()
	if c != nil {
		c.Stop()
	}
}

// Close stops the checks, wakes the requests waiting for a connection and
// closes the idle connections and message targets of the targets this
// upstream still owns: those a newer upstream (a reload) took over stay
// open for it, and the others are retired (engines stop reusing their
// connections). Connections in use close when their exchange ends.
func (u *Upstream) Close() {
	u.StopChecks()
	u.closed.Store(true)
	u.pool.Close()
	for _, t := range u.targets {
		if t.owner.Load() != u {
			continue
		}
		t.ut.Retire()
		t.closeIdle()
		if t.mt != nil {
			t.mt.Close()
		}
	}
}

// target is one upstream address and its idle connections (a LIFO stack:
// the most recently used connection is the least likely to have been
// closed by the origin).
type target struct {
	addr string
	// ut is the policy's target (health, in-flight count); its Slot is
	// this target, carried across reloads.
	ut *upstream.Target
	// owner is the newest upstream holding the target (a reload moves
	// it), whose settings its connections use.
	owner atomic.Pointer[Upstream]
	mt    MessageTarget // nil for stream targets
	// ap is addr parsed, when it is an IP address and port (apOK).
	ap   netip.AddrPort
	apOK bool
	// tlsc is the owner's TLS config for this target (nil: plain TCP).
	tlsc atomic.Pointer[tls.Config]
	mu   sync.Mutex
	idle []*upConn
	// h2 are the target's HTTP/2 connections (h2up.go).
	h2 h2Conns
}

// upConn is a connection to a target with its buffers; it moves between the
// idle stack and one exchange at a time.
type upConn struct {
	t    *target
	nc   net.Conn
	buf  []byte // response bytes: buf[r:w] unconsumed
	r, w int
	out  []byte // request head (and small body) being sent
	resp phttp.Response
	dec  phttp.ChunkedDecoder
	// lastUsed is when the connection was returned to the pool.
	lastUsed time.Time
	// fresh: dialed for this exchange (not taken from the pool).
	fresh bool
	// tlsc is the TLS config the connection was dialed with (nil: plain
	// TCP); a reload that changes it retires the connection.
	tlsc *tls.Config
	// probe checks a pooled connection before a request that may not
	// be resent (probe_linux.go); nil where it cannot.
	probe *prober
	// readDL and writeDL are the deadlines last set (zero: unknown). An
	// exchange moves them only when they would otherwise fire early or
	// more than a quarter of the timeout late, which saves two timer
	// updates per request on a busy keep-alive connection: the response
	// header timeout is thus between 3/4 and all of its configured value.
	readDL, writeDL time.Time
	// tw is the response a chunked body's trailers go to (trailers.go).
	tw *server.ResponseWriter
}

func (c *upConn) setReadDeadline(now time.Time, d time.Duration) {
	if want := now.Add(d); lazyMove(c.readDL, want, d) {
		c.readDL = want
		c.nc.SetReadDeadline(want)
	}
}

func (c *upConn) setWriteDeadline(now time.Time, d time.Duration) {
	if want := now.Add(d); lazyMove(c.writeDL, want, d) {
		c.writeDL = want
		c.nc.SetWriteDeadline(want)
	}
}

// lazyMove reports whether a deadline cur should be moved to want.
func lazyMove(cur, want time.Time, d time.Duration) bool {
	return cur.IsZero() || cur.After(want) || want.Sub(cur) >= d/4
}

// upstreamReadBuf fits typical response heads and small bodies in one read.
const upstreamReadBuf = 16 << 10

// get returns an idle connection or dials a new one. probe: the request
// may not be resent once written, so an idle connection the upstream has
// closed is skipped (probe_linux.go).
func (t *target) get(now time.Time, probe bool, connect time.Duration) (*upConn, error) {
	maxIdle := t.owner.Load().opts.IdleConnTimeout
	tlsc := t.tlsc.Load()
	for t.ut.Reusable() {
		t.mu.Lock()
		n := len(t.idle)
		if n == 0 {
			t.mu.Unlock()
			break
		}
		c := t.idle[n-1]
		t.idle[n-1] = nil
		t.idle = t.idle[:n-1]
		t.mu.Unlock()
		if now.Sub(c.lastUsed) > maxIdle || c.tlsc != tlsc || probe && c.probe.closedByPeer() {
			c.nc.Close()
			continue
		}
		c.fresh = false
		return c, nil
	}
	return t.connect(connect)
}

// connect opens a new connection to t, with TLS when t's upstream
// speaks it.
func (t *target) connect(connect time.Duration) (*upConn, error) {
	if tlsc := t.tlsc.Load(); tlsc != nil {
		return t.dialTLS(tlsc, connect)
	}
	return t.dial(connect)
}

// dial opens a new plain connection to t.
func (t *target) dial(connect time.Duration) (*upConn, error) {
	nc, err := net.DialTimeout("tcp", t.addr, connect)
	if err != nil {
		return nil, &dialError{err}
	}
	return &upConn{t: t, nc: nc, buf: make([]byte, upstreamReadBuf), fresh: true, probe: newProber(nc)}, nil
}

// put returns c to the idle stack, or closes it if the pool is full or the
// upstream closed.
func (t *target) put(c *upConn, now time.Time) {
	c.lastUsed = now
	c.r, c.w = 0, 0
	c.out = c.out[:0]
	up := t.owner.Load()
	t.mu.Lock()
	if len(t.idle) < up.opts.MaxIdlePerTarget && !up.closed.Load() && t.ut.Reusable() && c.tlsc == t.tlsc.Load() {
		t.idle = append(t.idle, c)
		t.mu.Unlock()
		return
	}
	t.mu.Unlock()
	c.nc.Close()
}

// closeIdle closes the target's idle connections.
func (t *target) closeIdle() {
	t.mu.Lock()
	idle := t.idle
	t.idle = nil
	t.mu.Unlock()
	for _, c := range idle {
		c.nc.Close()
	}
	t.h2.closeIdle()
}

// dialError is a failed dial: nothing was sent (a connect failure for the
// policy, which fails over to another target).
type dialError struct{ err error }

func (e *dialError) Error() string { return e.err.Error() }
func (e *dialError) Unwrap() error { return e.err }
