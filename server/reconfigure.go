package server

import (
	phttp "github.com/simdedge/simdedge/parse/http"
	"github.com/simdedge/simdedge/server/access"
	"github.com/simdedge/simdedge/server/pathnorm"
)

// settings are the limits and timeouts a Server applies, with the parser
// built from them. They are immutable: Reconfigure swaps in a new value
// behind Server.cur, and each connection captures the pointer once, when it
// is accepted (a message when it is received), so its hot path reads plain
// fields and never an atomic. A reload therefore applies to new
// connections; established ones keep the settings they started with.
type settings struct {
	Limits   Limits
	Timeouts Timeouts
	parser   *phttp.Parser
	// trusted are Options.TrustedProxies: reloadable like the limits.
	trusted *access.Prefixes
	// paths are Options.Paths: reloadable like the limits.
	paths pathnorm.Options
}

func newSettings(o *Options) *settings {
	return &settings{
		Limits:   o.Limits,
		Timeouts: o.Timeouts,
		trusted:  o.TrustedProxies,
		paths:    o.Paths,
		parser: phttp.NewParser(phttp.Options{
			MaxRequestLine: o.Limits.MaxRequestLine,
			MaxHeaderBytes: o.Limits.MaxHeaderBytes,
			MaxHeaders:     o.Limits.MaxHeaders,
			AllowBareLF:    o.AllowBareLF,
			// Bodies are only de-chunked: a gzip-coded one would
			// reach handlers as if it were the content (501).
			OnlyChunked: true,
		}),
	}
}

// settings returns the settings new connections take.
func (s *Server) settings() *settings { return s.cur.Load() }

// Reconfigure replaces the server's limits and timeouts (zero fields take
// their defaults, as in New). Connections accepted from then on, on every
// listener and engine, use the new values; connections already open keep
// theirs until they close. MaxConns applies to the next accept of each
// Serve call. It is safe to call at any time, from any goroutine.
func (s *Server) Reconfigure(l Limits, t Timeouts) {
	o := s.opts
	o.Limits, o.Timeouts = l, t
	o.TrustedProxies = s.settings().trusted
	o.Paths = s.settings().paths
	o.normalize()
	s.cur.Store(newSettings(&o))
}

// SetTrustedProxies replaces Options.TrustedProxies for the connections
// accepted from then on (like Reconfigure; open connections keep theirs).
func (s *Server) SetTrustedProxies(p *access.Prefixes) {
	n := *s.settings()
	n.trusted = p
	s.cur.Store(&n)
}

// SetPaths replaces Options.Paths for the connections accepted from then
// on (like Reconfigure; open connections keep theirs).
func (s *Server) SetPaths(o pathnorm.Options) {
	n := *s.settings()
	n.paths = o
	s.cur.Store(&n)
}

// TrustedProxies returns the trusted proxies in force for new connections.
func (s *Server) TrustedProxies() *access.Prefixes { return s.settings().trusted }

// Limits returns the limits in force for new connections.
func (s *Server) Limits() Limits { return s.settings().Limits }

// Timeouts returns the timeouts in force for new connections.
func (s *Server) Timeouts() Timeouts { return s.settings().Timeouts }

// limits are the limits of the request's connection, or the server's
// current ones for a message or a clone.
func (r *Request) limits() *Limits {
	if r.c != nil && r.c.cfg != nil {
		return &r.c.cfg.Limits
	}
	return &r.srv.settings().Limits
}
