package router

import (
	"errors"
	"regexp"
	"strings"
	"sync/atomic"

	phttp "github.com/simdedge/simdedge/parse/http"
	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/metrics"
)

// Match selects requests. Empty fields match everything.
type Match struct {
	// Host is an exact host name ("api.example.com") or a suffix pattern
	// ("*.example.com", which matches "a.example.com" and
	// "a.b.example.com" but not "example.com"). It is compared ASCII
	// case-insensitively with the Host field (or an absolute-form target's
	// authority) without its port and without a trailing dot: a fully
	// qualified "api.example.com." names the same host (RFC 1034 §3.1),
	// so it must not fall through to a later route.
	Host string
	// Path matches the path exactly; PathPrefix matches paths that start
	// with it (byte-wise, as nginx's prefix locations: "/api" also matches
	// "/apis"; write "/api/" to mean the directory). The path is the
	// target's up to '?', after the server's path normalisation
	// (server/pathnorm: dot segments removed, unreserved escapes decoded,
	// slashes merged, unless configured otherwise).
	Path       string
	PathPrefix string
	// Methods lists the accepted methods (case-sensitive, RFC 9110 §9.1).
	Methods []string
	// PathRegex, Headers and Query: see matchers.go. PathRegex must match
	// the path (RE2, unanchored); its groups are the captures {1}.. of
	// the route's templates (policy.go).
	PathRegex *regexp.Regexp
	Headers   []HeaderMatch
	Query     []QueryMatch
}

// Route is a Match and the handler it leads to.
type Route struct {
	Name    string
	Match   Match
	Handler server.Handler
	// Metrics, if set, are the counters the route's requests count into
	// (server.Options.Metrics; metrics.Set.Route gives them by name when
	// the table is built, so no lookup happens per request).
	Metrics *metrics.Route
	// Policy, if set, rewrites the request and its responses before
	// Handler runs (policy.go).
	Policy *Policy
	// PathAsSent: the route is matched on the normalised path (the
	// server normalises every target before routing, server/pathnorm),
	// but its policy, handler and upstream get the target as the client
	// sent it (server.Request.SendAsSent), for backends that need the
	// exact bytes ("//", "%2f"). Captures of PathRegex then come from the
	// path as sent.
	PathAsSent bool
}

// Table routes requests: the first route whose Match accepts the request
// serves it; requests no route accepts get 404. The asterisk and authority
// forms of target ("OPTIONS *", CONNECT) name no route: they are answered
// by server.SpecialTarget. It is immutable and safe for concurrent use.
type Table struct {
	routes []compiled
}

type compiled struct {
	Route
	// plan is the route's steps and action (server.Plan), built once.
	plan       server.Plan
	hostExact  string // lower case
	hostSuffix string // lower case, with the leading '.'
	extra      *extraMatch
}

var (
	ErrNoHandler   = errors.New("router: route without handler")
	ErrBadHost     = errors.New("router: invalid host pattern")
	ErrBadPath     = errors.New("router: path must start with '/'")
	ErrPathAndPref = errors.New("router: path and path_prefix are exclusive")
)

// New compiles routes into a Table, in order.
func New(routes []Route) (*Table, error) {
	t := &Table{routes: make([]compiled, 0, len(routes))}
	for _, r := range routes {
		if r.Handler == nil {
			return nil, ErrNoHandler
		}
		c := compiled{Route: r}
		h := strings.ToLower(r.Match.Host)
		if h != "" {
			// The fully qualified spelling names the same host.
			if h = strings.TrimSuffix(h, "."); h == "" || strings.HasSuffix(h, ".") {
				return nil, ErrBadHost
			}
		}
		switch {
		case h == "":
		case strings.HasPrefix(h, "*."):
			if len(h) == 2 || strings.ContainsAny(h[2:], "*:/ ") {
				return nil, ErrBadHost
			}
			c.hostSuffix = h[1:]
		default:
			if strings.ContainsAny(h, "*/ ") {
				return nil, ErrBadHost
			}
			c.hostExact = h
		}
		m := r.Match
		if m.Path != "" && m.PathPrefix != "" {
			return nil, ErrPathAndPref
		}
		if m.Path != "" && m.Path[0] != '/' || m.PathPrefix != "" && m.PathPrefix[0] != '/' {
			return nil, ErrBadPath
		}
		var err error
		if c.extra, err = compileExtra(&m); err != nil {
			return nil, err
		}
		c.plan = planOf(r.Handler)
		c.plan.Metrics = r.Metrics
		if c.plan.Rewrite, err = withPolicy(&c.Route); err != nil {
			return nil, err
		}
		t.routes = append(t.routes, c)
	}
	return t, nil
}

// Routes returns the table's routes in order.
func (t *Table) Routes() []Route {
	out := make([]Route, len(t.routes))
	for i := range t.routes {
		out[i] = t.routes[i].Route
	}
	return out
}

// Lookup returns the first route that accepts the request, or nil.
func (t *Table) Lookup(r *server.Request) *Route {
	if c := t.lookup(r); c != nil {
		return &c.Route
	}
	return nil
}

// lookup is Lookup's search.
func (t *Table) lookup(r *server.Request) *compiled {
	if lookupHook != nil {
		lookupHook()
	}
	host, path := hostOf(r), pathOf(r.Target())
	method := r.Method()
	for i := range t.routes {
		c := &t.routes[i]
		if c.accepts(host, path, method) && (c.extra == nil || c.extra.accepts(r, path)) {
			return c
		}
	}
	return nil
}

// lookupHook, when set (by tests, before any server starts), is called on
// every lookup: the engines must look a request's route up once.
var lookupHook func()

// Route implements server.Router: the plan of the first route that
// accepts r, the special targets' (server.SpecialPlan), or the 404's.
// The server looks it up once per request and runs it on every engine.
func (t *Table) Route(r *server.Request) *server.Plan {
	if p := server.SpecialPlan(r); p != nil {
		return p
	}
	if c := t.lookup(r); c != nil {
		return &c.plan
	}
	return notFoundPlan
}

// ServeEdge implements server.Handler, for a Table that is not the
// server's Handler (the server asks Route).
func (t *Table) ServeEdge(w *server.ResponseWriter, r *server.Request) {
	t.Route(r).ServeEdge(w, r)
}

// notFoundPlan answers requests that no route accepts.
var notFoundPlan = &server.Plan{Action: Respond(404, "not found\n", [][2]string{{"Content-Type", "text/plain; charset=utf-8"}})}

func (c *compiled) accepts(host, path, method []byte) bool {
	m := &c.Match
	if c.hostExact != "" && !phttp.EqualFold(host, c.hostExact) {
		return false
	}
	if c.hostSuffix != "" && (len(host) <= len(c.hostSuffix) || !phttp.EqualFold(host[len(host)-len(c.hostSuffix):], c.hostSuffix)) {
		return false
	}
	if m.Path != "" && string(path) != m.Path {
		return false
	}
	if m.PathPrefix != "" && !(len(path) >= len(m.PathPrefix) && string(path[:len(m.PathPrefix)]) == m.PathPrefix) {
		return false
	}
	if len(m.Methods) > 0 {
		ok := false
		for _, x := range m.Methods {
			if string(method) == x {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// hostOf is the request's host without port and trailing dot: the
// authority of an absolute-form target (RFC 9112 §3.2.2 says it wins over
// Host), else the Host field.
func hostOf(r *server.Request) []byte {
	h := r.Host()
	t := r.Target()
	if len(t) > 0 && t[0] != '/' && t[0] != '*' {
		if i := indexString(t, "://"); i > 0 {
			a := t[i+3:]
			end := 0
			for end < len(a) && a[end] != '/' && a[end] != '?' && a[end] != '#' {
				end++
			}
			h = a[:end]
			if at := lastIndexByte(h, '@'); at >= 0 {
				h = h[at+1:]
			}
		}
	}
	h = stripPort(h)
	if n := len(h); n > 1 && h[n-1] == '.' {
		h = h[:n-1] // "example.com." is "example.com"
	}
	return h
}

func stripPort(h []byte) []byte {
	if len(h) > 0 && h[0] == '[' { // IP literal: "[::1]:8080"
		if i := lastIndexByte(h, ']'); i > 0 {
			return h[:i+1]
		}
		return h
	}
	if i := lastIndexByte(h, ':'); i >= 0 {
		return h[:i]
	}
	return h
}

// pathOf is the path of an origin-form or absolute-form target.
func pathOf(t []byte) []byte {
	if len(t) > 0 && t[0] != '/' {
		i := indexString(t, "://")
		if i < 0 {
			return nil // authority form or "*"
		}
		t = t[i+3:]
		j := 0
		for j < len(t) && t[j] != '/' && t[j] != '?' {
			j++
		}
		t = t[j:]
		if len(t) == 0 || t[0] == '?' {
			return []byte("/")
		}
	}
	for i, c := range t {
		if c == '?' || c == '#' {
			return t[:i]
		}
	}
	return t
}

func indexString(b []byte, s string) int {
	for i := 0; i+len(s) <= len(b); i++ {
		if string(b[i:i+len(s)]) == s {
			return i
		}
	}
	return -1
}

func lastIndexByte(b []byte, c byte) int {
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] == c {
			return i
		}
	}
	return -1
}

// Switch serves with the Table most recently stored, swapped atomically
// (SIGHUP reload): a request runs entirely on the table it started with.
type Switch struct {
	cur atomic.Pointer[Table]
}

// NewSwitch returns a Switch serving t.
func NewSwitch(t *Table) *Switch {
	s := &Switch{}
	s.cur.Store(t)
	return s
}

// Store replaces the table for requests that start from now on.
func (s *Switch) Store(t *Table) { s.cur.Store(t) }

// Load returns the current table.
func (s *Switch) Load() *Table { return s.cur.Load() }

// ServeEdge implements server.Handler.
func (s *Switch) ServeEdge(w *server.ResponseWriter, r *server.Request) {
	s.cur.Load().ServeEdge(w, r)
}

// Route implements server.Router with the current table: the plan it
// returns serves the request, so a request runs entirely on the table it
// was routed with, wherever it is served.
func (s *Switch) Route(r *server.Request) *server.Plan {
	return s.cur.Load().Route(r)
}
