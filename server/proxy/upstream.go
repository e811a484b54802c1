package proxy

import (
	"errors"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	phttp "github.com/simdedge/simdedge/parse/http"
)

// Defaults of an Upstream.
const (
	DefaultConnectTimeout        = 2 * time.Second
	DefaultResponseHeaderTimeout = 30 * time.Second
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
	// ConnectTimeout bounds a dial (504 beyond it).
	ConnectTimeout time.Duration
	// ResponseHeaderTimeout bounds the wait for the response head after
	// the request was sent (504 beyond it), and each read of the body.
	ResponseHeaderTimeout time.Duration
	// IdleConnTimeout: pooled connections idle longer are closed instead
	// of reused.
	IdleConnTimeout  time.Duration
	MaxIdlePerTarget int
	// MaxResponseHeaderBytes bounds an upstream response head; zero means
	// parse/http's default.
	MaxResponseHeaderBytes int
}

// Upstream is a named pool of targets. It is safe for concurrent use, and
// holds idle connections until Close.
type Upstream struct {
	opts    UpstreamOptions
	targets []*target
	// messages: the targets are MessageTargets.
	messages bool
	next     atomic.Uint64
	parser   *phttp.Parser
	closed   atomic.Bool
	// loopable: every target is an IP address (the event loop may
	// proxy to it, see Proxy.LoopProxy).
	loopable bool
}

// ErrNoTargets is returned by NewUpstream for an empty target list.
var ErrNoTargets = errors.New("proxy: upstream has no targets")

// NewUpstream returns an Upstream over o.Targets.
func NewUpstream(o UpstreamOptions) (*Upstream, error) {
	if len(o.Targets) == 0 {
		return nil, ErrNoTargets
	}
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = DefaultConnectTimeout
	}
	if o.ResponseHeaderTimeout <= 0 {
		o.ResponseHeaderTimeout = DefaultResponseHeaderTimeout
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
	for i, a := range o.Targets {
		t := &target{addr: a, up: u}
		if u.messages {
			if o.MessageTargets[i] == nil {
				return nil, ErrMixedTargets
			}
			t.mt = o.MessageTargets[i]
		} else if _, _, err := net.SplitHostPort(a); err != nil {
			return nil, err
		} else if ap, err := netip.ParseAddrPort(a); err == nil {
			// An IP address: the event loop may connect to it
			// without a (blocking) name lookup.
			t.ap, t.apOK = ap, true
		}
		u.targets = append(u.targets, t)
	}
	u.loopable = !u.messages
	for _, t := range u.targets {
		u.loopable = u.loopable && t.apOK
	}
	return u, nil
}

// Name is the upstream's name.
func (u *Upstream) Name() string { return u.opts.Name }

// pick chooses the next target round-robin. Later policies (least
// connections, power of two choices, consistent hash) replace this method
// behind the same call.
func (u *Upstream) pick() *target {
	if len(u.targets) == 1 {
		return u.targets[0]
	}
	return u.targets[(u.next.Add(1)-1)%uint64(len(u.targets))]
}

// Close closes the idle connections and the message targets; connections
// in use close when their exchange ends.
func (u *Upstream) Close() {
	u.closed.Store(true)
	for _, t := range u.targets {
		t.mu.Lock()
		idle := t.idle
		t.idle = nil
		t.mu.Unlock()
		for _, c := range idle {
			c.nc.Close()
		}
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
	up   *Upstream
	mt   MessageTarget // nil for stream targets
	// ap is addr parsed, when it is an IP address and port (apOK).
	ap   netip.AddrPort
	apOK bool
	mu   sync.Mutex
	idle []*upConn
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
	// probe checks a pooled connection before a request that may not
	// be resent (probe_linux.go); nil where it cannot.
	probe *prober
	// readDL and writeDL are the deadlines last set (zero: unknown). An
	// exchange moves them only when they would otherwise fire early or
	// more than a quarter of the timeout late, which saves two timer
	// updates per request on a busy keep-alive connection: the response
	// header timeout is thus between 3/4 and all of its configured value.
	readDL, writeDL time.Time
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
func (t *target) get(now time.Time, probe bool) (*upConn, error) {
	maxIdle := t.up.opts.IdleConnTimeout
	for {
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
		if now.Sub(c.lastUsed) > maxIdle || probe && c.probe.closedByPeer() {
			c.nc.Close()
			continue
		}
		c.fresh = false
		return c, nil
	}
	nc, err := net.DialTimeout("tcp", t.addr, t.up.opts.ConnectTimeout)
	if err != nil {
		return nil, err
	}
	return &upConn{t: t, nc: nc, buf: make([]byte, upstreamReadBuf), fresh: true, probe: newProber(nc)}, nil
}

// put returns c to the idle stack, or closes it if the pool is full or the
// upstream closed.
func (t *target) put(c *upConn, now time.Time) {
	c.lastUsed = now
	c.r, c.w = 0, 0
	c.out = c.out[:0]
	t.mu.Lock()
	if len(t.idle) < t.up.opts.MaxIdlePerTarget && !t.up.closed.Load() {
		t.idle = append(t.idle, c)
		t.mu.Unlock()
		return
	}
	t.mu.Unlock()
	c.nc.Close()
}
