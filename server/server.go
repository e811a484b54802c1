package server

import (
	"context"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/simdedge/simdedge/server/metrics"
)

// Handler serves one request. The Request's views (method, target, headers,
// body bytes, URL, JSON document) are valid only until ServeEdge returns;
// see Request. The ResponseWriter must not be used after ServeEdge returns.
type Handler interface {
	ServeEdge(w *ResponseWriter, r *Request)
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(w *ResponseWriter, r *Request)

// ServeEdge calls f(w, r).
func (f HandlerFunc) ServeEdge(w *ResponseWriter, r *Request) { f(w, r) }

// Server runs connection loops over stream and message transports and
// hands every request to one Handler. A Server may serve several listeners
// of either kind at once; Shutdown drains them all.
type Server struct {
	opts Options
	// cur holds the limits and timeouts new connections take
	// (reconfigure.go).
	cur atomic.Pointer[settings]
	// ips counts open connections per client address (admit.go).
	ips ipCounts

	mu        sync.Mutex
	listeners map[any]func() error
	conns     map[*conn]struct{}
	// aborts close every connection of an event loop at once (Close,
	// or Shutdown past its bound); loop connections are not in conns.
	aborts map[any]func()
	// stopped marks the listeners StopListener closed: their Serve
	// calls end with ErrListenerStopped rather than an accept error.
	stopped map[any]bool
	aliases map[any]any // listener -> its tracking key (ServeLoop's loop)
	// h2 are the listeners that take h2c and the HTTP/2 connections
	// open, for GOAWAY on Shutdown and StopListener (h2serve.go).
	h2 h2Registry
	h3 h3Registry
	// idle holds the goroutine engine's parked idle connections
	// (idlepoll_linux.go).
	idle    *idlePoll
	active  sync.WaitGroup // connection and message goroutines, event loops
	closing atomic.Bool
	// draining: StartDrain was called (drain.go).
	draining atomic.Bool

	// lpaths are the listeners' own path normalisation (paths.go).
	lpaths listenerPaths
	// laltsvc are the listeners' Alt-Svc values (altsvc.go).
	laltsvc listenerAltSvc
	// router looks each request's route up once (plan.go): opts.Handler
	// when it is a Router, else a router whose one plan is opts.Handler
	// without steps, so that every engine runs plans the same way.
	router Router
	// workers run HTTP/2 and HTTP/3 stream handlers (streamwork.go).
	workers streamWorkers
}

// New returns a Server for o. It panics if o.Handler is nil, a programming
// error.
func New(o Options) *Server {
	if o.Handler == nil {
		panic("server: nil Handler")
	}
	o.normalize()
	s := &Server{
		opts:      o,
		listeners: make(map[any]func() error),
		conns:     make(map[*conn]struct{}),
		idle:      newIdlePoll(),
		aborts:    make(map[any]func()),
		stopped:   make(map[any]bool),
	}
	s.cur.Store(newSettings(&o))
	s.router, _ = o.Handler.(Router)
	if s.router == nil {
		s.router = onePlan{&Plan{Action: o.Handler}}
	}
	return s
}

// Options returns the effective options (defaults filled in), with the
// limits and timeouts in force for new connections (see Reconfigure).
func (s *Server) Options() Options {
	o := s.opts
	cfg := s.settings()
	o.Limits, o.Timeouts = cfg.Limits, cfg.Timeouts
	return o
}

// ListenAndServe serves kernel TCP on addr ("127.0.0.1:8080").
func (s *Server) ListenAndServe(addr string) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return s.ServeStream(TCPListener(l))
}

func (s *Server) track(key any, closeFn func() error) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing.Load() {
		return false
	}
	s.listeners[key] = closeFn
	return true
}

// trackHeld is track that also counts the caller as active until it
// calls s.active.Done, so that connections it accepts while the server
// closes can still be counted (addConn) before Shutdown's wait ends.
func (s *Server) trackHeld(key any, closeFn func() error) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing.Load() {
		return false
	}
	s.listeners[key] = closeFn
	s.active.Add(1)
	return true
}

func (s *Server) untrack(key any) {
	s.mu.Lock()
	delete(s.listeners, key)
	delete(s.aborts, key)
	delete(s.stopped, key)
	s.mu.Unlock()
}

// trackLoop registers an event loop: closeFn stops its accepting, abort
// closes all its connections, and the loop counts as active until done.
func (s *Server) trackLoop(key any, closeFn func() error, abort func()) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing.Load() {
		return false
	}
	s.listeners[key] = closeFn
	s.aborts[key] = abort
	s.active.Add(1)
	return true
}

// acceptBackoff is the longest pause after a temporary accept error
// (EMFILE and friends), so that the loop does not spin while descriptors
// are exhausted.
const acceptBackoff = time.Second

// ServeStream accepts connections from l and serves each on its own
// goroutine (Go's netpoller makes that the natural model for kernel TCP)
// until l fails or the server shuts down, then returns ErrServerClosed or
// the accept error. It closes l.
func (s *Server) ServeStream(l StreamListener) error {
	if !s.trackHeld(l, l.Close) {
		l.Close()
		return ErrServerClosed
	}
	defer s.active.Done()
	defer s.untrack(l)
	defer l.Close()
	sl := newStreamSlots()
	h2c := s.h2.h2cOn(l)
	lst := s.opts.Metrics.Listener(l.Addr().String())
	var delay time.Duration
	for {
		st, err := l.Accept()
		if err != nil {
			if s.closing.Load() {
				return ErrServerClosed
			}
			if s.wasStopped(l) {
				return ErrListenerStopped
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() || isTemporary(err) {
				delay = min(max(2*delay, 5*time.Millisecond), acceptBackoff)
				s.opts.Logger.Warn("accept failed; retrying", "err", err, "delay", delay)
				time.Sleep(delay)
				continue
			}
			return err
		}
		delay = 0
		// Over its address's share: refused at once, before it costs
		// a slot or a goroutine (admit.go).
		ip, counted := clientKey(st.RemoteAddr())
		counted = counted && !perIPExempt(st, s.settings().trusted)
		if counted && !s.ips.acquire(ip, s.settings().Limits.MaxConnsPerIP) {
			lst.Refused(0, metrics.RefusedPerIP)
			st.Close()
			continue
		}
		if !s.waitSlot(sl) {
			if counted {
				s.ips.release(ip)
			}
			st.Close()
			return ErrServerClosed
		}
		c := newConn(s, st)
		c.home, c.ip, c.ipHeld = sl, ip, counted
		c.h2c, c.lkey = h2c, l
		c.paths = s.pathsFor(l, c.cfg)
		c.altSvc = s.altSvcFor(l)
		c.countOpen(lst)
		// Accepted as Shutdown began: served all the same (a fresh
		// connection is spared, sparedFresh), since on a listening
		// socket that outlives the process (systemd's) it has left the
		// queue the next process would have taken it from.
		s.addConn(c)
		c.done = func(c *conn) {
			s.removeConn(c)
			sl.release()
		}
		go c.run(true)
	}
}

func isTemporary(err error) bool {
	t, ok := err.(interface{ Temporary() bool })
	return ok && t.Temporary()
}

// addConn counts a connection a goroutine serves: one ServeStream
// accepted, or one an event loop hands off with a request to run. It adds
// also while the server closes, so that Shutdown waits for it instead of
// dropping it; the caller's own count in s.active (trackHeld, trackLoop)
// is held meanwhile, so the Add cannot follow a finished Wait.
func (s *Server) addConn(c *conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.conns[c] = struct{}{}
	s.active.Add(1)
}

func (s *Server) removeConn(c *conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
	c.release()
	s.active.Done()
}

// shutdownPoll is how often Shutdown looks for connections that have
// become idle since its last pass.
const shutdownPoll = 20 * time.Millisecond

// Shutdown stops accepting, lets in-flight requests finish (their
// responses carry "Connection: close"), closes idle connections, and waits
// for all connections to end. If ctx has no deadline, Options.Timeouts.Drain
// bounds the wait. When the bound expires it closes every remaining
// connection and returns the context's error at once.
func (s *Server) Shutdown(ctx context.Context) error {
	if d := s.settings().Timeouts.Drain; d > 0 {
		if _, ok := ctx.Deadline(); !ok {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, d)
			defer cancel()
		}
	}
	s.closeListeners()
	s.h2.goaway(nil, true) // HTTP/2 clients learn at once (h2serve.go)
	s.h3.goaway(nil)       // and HTTP/3 ones (h3conn.go)
	done := make(chan struct{})
	go func() { s.active.Wait(); close(done) }()
	t := time.NewTicker(shutdownPoll)
	defer t.Stop()
	for {
		s.wakeIdle()
		select {
		case <-done:
			return nil
		case <-ctx.Done():
			// Handlers still running see their streams fail; Shutdown
			// does not wait for them, so a stuck handler cannot hold up
			// the process's exit.
			s.closeConns()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// Close stops accepting and closes every connection at once.
func (s *Server) Close() error {
	s.closeListeners()
	s.closeConns()
	s.active.Wait()
	return nil
}

func (s *Server) closeListeners() {
	s.mu.Lock()
	s.closing.Store(true)
	s.workers.close() // waiting stream workers end; running ones as they finish
	fns := make([]func() error, 0, len(s.listeners))
	for _, fn := range s.listeners {
		fns = append(fns, fn)
	}
	s.mu.Unlock()
	for _, fn := range fns {
		fn()
	}
}

// wakeIdle interrupts the read of every connection waiting for a next
// request; the loop then sees the server closing and ends (see
// conn.waitIdle for the ordering that makes this race-free). A connection
// accepted a moment ago is spared (sparedFresh) until a later call:
// Shutdown calls this every shutdownPoll.
func (s *Server) wakeIdle() {
	s.mu.Lock()
	defer s.mu.Unlock()
	cutoff := freshCutoff(time.Now())
	for c := range s.conns {
		if st := c.state.Load(); waiting(st) && !sparedFresh(st, cutoff) {
			c.st.SetReadDeadline(aLongTimeAgo)
		}
	}
	s.idle.wakeAll(false)
}

func (s *Server) closeConns() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.conns {
		c.st.Close()
	}
	s.idle.wakeAll(true)
	for _, abort := range s.aborts {
		abort()
	}
}

// aLongTimeAgo is a deadline in the past: it makes a pending Read return.
var aLongTimeAgo = time.Unix(1, 0)
