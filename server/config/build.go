package config

import (
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"sort"
	"strings"
	"time"

	phttp "github.com/simdedge/simdedge/parse/http"
	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/metrics"
	"github.com/simdedge/simdedge/server/pathnorm"
	"github.com/simdedge/simdedge/server/proxy"
	"github.com/simdedge/simdedge/server/router"
	"github.com/simdedge/simdedge/server/upstream"
	"go.yaml.in/yaml/v3"
)

// DefaultListen is the address served when the configuration names none.
const DefaultListen = "127.0.0.1:8080"

// WithDefaults returns a copy of c with every default filled in: the
// effective configuration that `simdedge check` prints.
func (c *Config) WithDefaults() *Config {
	e := *c
	if e.Listen == "" && len(e.Listeners) == 0 {
		e.Listen = DefaultListen
	}
	e.Engine = c.engine()
	if e.ProxyOnLoop == nil {
		v := DefaultProxyOnLoop
		e.ProxyOnLoop = &v
	}
	e.Listeners = nil
	for _, l := range c.Listeners {
		e.Listeners = append(e.Listeners, l.withDefaults(e.Engine))
	}
	l := &e.Limits
	if l.MaxHeaderBytes == 0 {
		l.MaxHeaderBytes = phttp.DefaultMaxHeaderBytes
	}
	if l.MaxHeaders == 0 {
		l.MaxHeaders = phttp.DefaultMaxHeaders
	}
	if l.MaxBodyBytes == 0 {
		l.MaxBodyBytes = server.DefaultMaxBodyBytes
	}
	if l.MaxConns == 0 {
		l.MaxConns = server.DefaultMaxConns
	}
	if l.MaxConnsPerIP == 0 {
		l.MaxConnsPerIP = server.DefaultMaxConnsPerIP(l.MaxConns)
	}
	t := &e.Timeouts
	def := func(d *Duration, v time.Duration) {
		if *d == 0 {
			*d = Duration(v)
		}
	}
	def(&t.ReadHeader, server.DefaultReadHeaderTimeout)
	def(&t.Idle, server.DefaultIdleTimeout)
	def(&t.Write, server.DefaultWriteTimeout)
	def(&t.Drain, server.DefaultDrainTimeout)
	def(&t.BodyRateWindow, server.DefaultBodyRateWindow)
	def(&t.TunnelIdle, server.DefaultTunnelIdleTimeout)
	if t.BodyMinRate == 0 {
		t.BodyMinRate = server.DefaultBodyMinRate
	}
	e.HTTP2 = c.HTTP2.withDefaults()
	e.HTTP3 = c.HTTP3.withDefaults()
	e.Log = c.Log.withDefaults()
	if x := c.XDS(); x != nil {
		e.Dynamic = &Dynamic{XDS: x.withDefaults()}
	}
	e.Paths = c.Paths.withDefaults()
	var a Admin
	if c.Admin != nil {
		a = *c.Admin
	}
	e.Admin = a.withDefaults()
	if e.UntrustedForwarding == "" {
		e.UntrustedForwarding = DefaultUntrustedForwarding
	}
	e.Routes = routesWithUpgrades(c.Routes) // upgrade.go
	for i := range e.Routes {
		e.Routes[i] = e.Routes[i].gateDefaults()
	}
	e.AccessLog, e.RequestID, e.Trace = c.AccessLog.withDefaults(), c.RequestID.withDefaults(), c.Trace.withDefaults()
	e.Upstreams = append([]Upstream(nil), c.Upstreams...)
	for i := range e.Upstreams {
		u := &e.Upstreams[i]
		*u = u.withDefaults()
	}
	for i := range e.Routes { // a copy of c.Routes (routesWithUpgrades)
		r := &e.Routes[i]
		if r.Compress != nil {
			r.Compress = r.Compress.withDefaults()
		}
		if r.Files != nil {
			r.Files = r.Files.withDefaults()
		}
	}
	return &e
}

// YAML renders c (use WithDefaults first for the effective values).
func (c *Config) YAML() ([]byte, error) { return yaml.Marshal(c) }

// ServerOptions returns the server options c describes, without a handler.
func (c *Config) ServerOptions() server.Options {
	e := c.WithDefaults()
	o := server.Options{
		LoopProxy:      *e.ProxyOnLoop,
		TrustedProxies: c.TrustedPrefixes(),
		HTTP2:          e.HTTP2.limits(),
		Limits: server.Limits{
			MaxHeaderBytes: e.Limits.MaxHeaderBytes,
			MaxHeaders:     e.Limits.MaxHeaders,
			MaxBodyBytes:   e.Limits.MaxBodyBytes,
			MaxConns:       e.Limits.MaxConns,
			MaxConnsPerIP:  e.Limits.MaxConnsPerIP,
		},
		Timeouts: server.Timeouts{
			ReadHeader: time.Duration(e.Timeouts.ReadHeader),
			Idle:       time.Duration(e.Timeouts.Idle),
			Write:      time.Duration(e.Timeouts.Write),
			Drain:      time.Duration(e.Timeouts.Drain),

			// A body's minimum rate, over the whole body.
			BodyMinRate:    e.Timeouts.BodyMinRate,
			BodyRateWindow: time.Duration(e.Timeouts.BodyRateWindow),
			TunnelIdle:     time.Duration(e.Timeouts.TunnelIdle),
		},
	}
	o.Paths = c.Paths.Options(pathnorm.Options{})
	c.observeOptions(&o)
	return o
}

// BuildOptions supplies what a configuration refers to by name.
type BuildOptions struct {
	// Handlers are the Go handlers routes name with "handler: NAME".
	Handlers map[string]server.Handler
	// Builtins are the targets of upstreams declared "builtin: NAME".
	Builtins map[string][]string
	// Schemes open the message targets of upstream targets written as
	// URLs ("rdma://10.0.0.2:7471?provider=verbs"), keyed by scheme. The
	// transports that implement them may not be imported here (layers):
	// the program registers them. A scheme not in the map is an error.
	Schemes map[string]func(*url.URL) (proxy.MessageTarget, error)
	Logger  *slog.Logger
	// Previous is the running snapshot a reload replaces: an upstream of
	// the same name keeps the health state, counters and idle
	// connections of the targets that remain (Snapshot.Start commits
	// it, the previous snapshot's Close drains the targets that left).
	Previous *Snapshot
	// Metrics, if set, gives every route its counters, by the route's
	// name (RouteMetricName).
	Metrics *metrics.Set
	// Swappable puts each proxy route's handler in a proxy.Slot, so that
	// Rebind can give the routes new upstreams without a new table (an
	// update of targets alone, from xDS).
	Swappable bool
	// OnDiscover, if set, is called when service discovery (resolve,
	// discover.go) changed an upstream's targets, from the watcher's
	// goroutine: the program then runs Refresh. It must not block (Stop
	// of a watcher waits for it).
	OnDiscover func()
	// NoDiscovery builds without DNS lookups (simdedge check): names
	// stand as targets.
	NoDiscovery bool
}

// Snapshot is what a configuration builds: an immutable routing table and
// the upstream pools it uses. A reload builds a new Snapshot, swaps its
// Table into the router.Switch, then closes the old one.
type Snapshot struct {
	Table     *router.Table
	Upstreams map[string]*proxy.Upstream
	// discovery holds the watchers of upstreams with resolve, by name.
	discovery  map[string]*discovered
	onDiscover func()
	// slots are the proxy routes' handlers (BuildOptions.Swappable).
	slots []routeSlot
}

// routeSlot is a proxy route's swappable handler and what it is built
// from.
type routeSlot struct {
	slot     *proxy.Slot
	upstream string
	opts     proxy.Options
}

// Start makes s the running snapshot: its upstreams take over the targets
// they kept from prev (nil on the first start), whose active checks stop,
// and start their own checks. Close prev afterwards: it drains only the
// targets s did not keep.
func (s *Snapshot) Start(prev *Snapshot) {
	if prev != nil {
		for _, u := range prev.Upstreams {
			u.StopChecks()
		}
	}
	for _, u := range s.Upstreams {
		u.Start()
	}
	s.startDiscovery(prev)
}

// Close stops the upstreams' checks and closes their idle connections
// (those of targets a newer snapshot took over stay open).
func (s *Snapshot) Close() {
	s.stopDiscovery()
	for _, u := range s.Upstreams {
		u.Close()
	}
}

// UpstreamNames lists the upstreams in name order.
func (s *Snapshot) UpstreamNames() []string {
	n := make([]string, 0, len(s.Upstreams))
	for k := range s.Upstreams {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

// Build creates the upstreams and the routing table. Errors name the line
// and key, as Parse's do.
func (c *Config) Build(o BuildOptions) (*Snapshot, error) {
	d := &decoder{}
	s := &Snapshot{Upstreams: map[string]*proxy.Upstream{}, discovery: map[string]*discovered{}, onDiscover: o.OnDiscover}
	c.buildUpstreams(d, o, s)
	routes := c.buildRoutes(d, o, s)
	if len(d.errs) > 0 {
		s.Close()
		return nil, errors.Join(d.errs...)
	}
	t, err := router.New(routes)
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("config: %w", err)
	}
	s.Table = t
	return s, nil
}

// ErrRebind: Rebind was given a snapshot it cannot rebind (not built
// Swappable) or a configuration whose routes name an upstream it lacks.
var ErrRebind = errors.New("config: cannot rebind the routes to these upstreams")

// Rebind builds c's upstreams (an upstream of the same name as one of
// o.Previous keeps the targets that stay, as Build's) under s's routing
// table, for a configuration that differs from s's only in its upstreams'
// targets: the routes, their counters and their plans stay as they are.
// The caller checks that c routes as s's configuration does. Nothing
// changes until Commit; then Start and Close as after Build.
func (s *Snapshot) Rebind(c *Config, o BuildOptions) (*Snapshot, error) {
	if len(s.slots) == 0 {
		return nil, ErrRebind
	}
	d := &decoder{}
	n := &Snapshot{Table: s.Table, Upstreams: map[string]*proxy.Upstream{}, discovery: map[string]*discovered{}, onDiscover: o.OnDiscover,
		slots: s.slots}
	c.buildUpstreams(d, o, n)
	for _, sl := range s.slots {
		if n.Upstreams[sl.upstream] == nil && len(d.errs) == 0 {
			d.errs = append(d.errs, ErrRebind)
		}
	}
	if len(d.errs) > 0 {
		n.Close()
		return nil, errors.Join(d.errs...)
	}
	return n, nil
}

// Commit makes the proxy routes of a rebound snapshot forward to its
// upstreams: requests that arrive from now on; those in flight finish on
// the upstream they started with.
func (s *Snapshot) Commit() {
	for _, sl := range s.slots {
		sl.slot.Store(proxy.New(s.Upstreams[sl.upstream], sl.opts))
	}
}

// buildUpstreams creates the upstreams into s (and their discovery
// watchers), reporting errors to d.
func (c *Config) buildUpstreams(d *decoder, o BuildOptions, s *Snapshot) {
	for i, u := range c.WithDefaults().Upstreams {
		key := fmt.Sprintf("upstreams[%d]", i)
		targets := u.Addresses()
		if u.Builtin != "" {
			t, ok := o.Builtins[u.Builtin]
			if !ok {
				d.fail(&yaml.Node{Line: u.builtinLine}, key+".builtin", "names no builtin upstream of this program")
				continue
			}
			targets = t
		}
		targets = streamTargets(targets)
		var resolved []upstream.TargetSpec
		if u.Resolve != nil {
			specs, dv, msg := u.discoverTargets(targets, o)
			if msg != "" {
				d.fail(&yaml.Node{Line: u.Resolve.line}, key+".resolve", msg)
				continue
			}
			if dv != nil {
				s.discovery[u.Name] = dv
			}
			resolved, targets = specs, make([]string, len(specs))
			for i, t := range specs {
				targets[i] = t.Address
			}
		}
		names, mts, ok := d.messageTargets(&u, key, targets, o.Schemes)
		if !ok {
			continue
		}
		tlsc, err := u.clientTLS(o.Logger)
		if err != nil {
			at := &yaml.Node{Line: u.line}
			if u.TLS != nil {
				at.Line = u.TLS.line
			}
			d.fail(at, key+".tls", err.Error())
			continue
		}
		var prev *proxy.Upstream
		if o.Previous != nil {
			prev = o.Previous.Upstreams[u.Name]
		}
		po := u.PoolOptions(nil)
		if u.Builtin != "" {
			po = u.PoolOptions(targets)
		}
		if resolved != nil {
			po.Targets = resolved
		}
		po.Logger = o.Logger
		// Message targets, and http:// and https:// ones, are named by
		// host:port.
		for i := range po.Targets {
			po.Targets[i].Address = names[i]
		}
		var active *upstream.ActiveOptions
		if a, ok := u.ActiveOptions(); ok {
			active = &a
		}
		up, err := proxy.NewUpstream(proxy.UpstreamOptions{
			Name:           u.Name,
			Targets:        names,
			MessageTargets: mts,
			Policy:         po,
			Active:         active,
			TLS:            tlsc,
			HTTP2:          u.IsHTTP2(),
			Previous:       prev,

			SendProxyProtocol: u.sendProxyVersion(),
		})
		if err != nil {
			for _, mt := range mts {
				mt.Close()
			}
			d.fail(&yaml.Node{Line: u.line}, key+".targets", err.Error())
			continue
		}
		s.Upstreams[u.Name] = up
	}
}

// buildRoutes creates the routes over s's upstreams, reporting errors to
// d.
func (c *Config) buildRoutes(d *decoder, o BuildOptions, s *Snapshot) []router.Route {
	routes := make([]router.Route, 0, len(c.Routes))
	for i, r := range c.Routes {
		key := fmt.Sprintf("routes[%d]", i)
		var h server.Handler
		switch {
		case r.Respond != nil:
			var hs [][2]string
			names := make([]string, 0, len(r.Respond.Headers))
			for k := range r.Respond.Headers {
				names = append(names, k)
			}
			sort.Strings(names)
			for _, k := range names {
				hs = append(hs, [2]string{k, r.Respond.Headers[k]})
			}
			h = router.Respond(r.Respond.Status, r.Respond.Body, hs)
		case r.Echo != nil:
			h = router.Echo()
		case r.Handler != "":
			h = o.Handlers[r.Handler]
			if h == nil {
				d.fail(&yaml.Node{Line: r.keyLine["handler"]}, key+".handler", "names no handler registered by this program")
				continue
			}
		case r.Proxy != nil:
			up := s.Upstreams[r.Proxy.Upstream]
			if up == nil {
				continue // reported for the upstream
			}
			po := proxy.Options{Logger: o.Logger, Upgrades: r.Proxy.Upgrades, UntrustedForwarding: c.forwarding()}
			h = proxy.New(up, po)
			if o.Swappable {
				sl := proxy.NewSlot(h.(*proxy.Proxy))
				s.slots = append(s.slots, routeSlot{slot: sl, upstream: r.Proxy.Upstream, opts: po})
				h = sl
			}
		case r.Redirect != nil:
			var err error
			if h, err = r.Redirect.handler(); err != nil {
				continue // reported by Parse
			}
		case r.Files != nil:
			fh, err := r.Files.handler()
			if err != nil {
				d.fail(&yaml.Node{Line: r.keyLine["files"]}, key+".files.root", err.Error())
				continue
			}
			h = fh
		}
		if r.Compress != nil && h != nil {
			if p, err := r.Compress.policy(); err == nil { // checked when decoded
				h = router.Compress(h, p)
			}
		}
		if r.HSTS != nil && h != nil {
			h = router.HSTS(h, r.HSTS.policy())
		}
		if h != nil {
			var err error
			if h, err = r.gate(h, o.Logger); err != nil {
				d.fail(&yaml.Node{Line: r.line}, key, err.Error())
				continue
			}
		}
		rt := router.Route{
			Name:    r.Name,
			Match:   r.Match.router(),
			Handler: h,
			Policy:  r.policy(),
			// normalize_path: false (config/paths.go).
			PathAsSent: r.NormalizePath != nil && !*r.NormalizePath,
		}
		if o.Metrics != nil {
			rt.Metrics = o.Metrics.Route(RouteMetricName(r.Name, i))
		}
		routes = append(routes, rt)
	}
	return routes
}

// messageTargets resolves the URL targets of an upstream through schemes.
// Targets without a scheme are returned as they are (stream targets, nil
// message targets); URL targets become message targets named by their
// host:port. An upstream mixing both kinds, or naming a scheme the program
// did not register, is an error at the upstream's line.
func (d *decoder) messageTargets(u *Upstream, key string, targets []string, schemes map[string]func(*url.URL) (proxy.MessageTarget, error)) ([]string, []proxy.MessageTarget, bool) {
	urls := 0
	for _, t := range targets {
		if strings.Contains(t, "://") {
			urls++
		}
	}
	if urls == 0 {
		return targets, nil, true
	}
	at := &yaml.Node{Line: u.line}
	if urls != len(targets) {
		d.fail(at, key+".targets", "mixes host:port and scheme:// targets")
		return nil, nil, false
	}
	names := make([]string, 0, len(targets))
	mts := make([]proxy.MessageTarget, 0, len(targets))
	fail := func(i int, msg string) ([]string, []proxy.MessageTarget, bool) {
		for _, mt := range mts {
			mt.Close()
		}
		d.fail(at, fmt.Sprintf("%s.targets[%d]", key, i), msg)
		return nil, nil, false
	}
	for i, t := range targets {
		pu, err := url.Parse(t)
		if err != nil {
			return fail(i, "is not a URL")
		}
		open := schemes[pu.Scheme]
		if open == nil {
			return fail(i, fmt.Sprintf("scheme %q is not supported by this program", safeScheme(pu.Scheme)))
		}
		mt, err := open(pu)
		if err != nil {
			return fail(i, err.Error())
		}
		names = append(names, pu.Host)
		mts = append(mts, mt)
	}
	return names, mts, true
}

// safeScheme returns s if it is a plausible URL scheme (RFC 3986 §3.1,
// bounded), else a placeholder, so configuration bytes echoed in errors
// stay printable.
func safeScheme(s string) string {
	if s == "" || len(s) > 32 {
		return "(invalid)"
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return "(invalid)"
		}
	}
	return s
}
