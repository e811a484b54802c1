package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"reflect"
	"slices"
	"strconv"
	"time"

	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/config"
	"github.com/simdedge/simdedge/server/metrics"
	"github.com/simdedge/simdedge/server/router"
)

// running is what a SIGHUP may change: the configuration in force, its
// snapshot (routes and upstreams), the server's limits and timeouts, and
// the tcp listeners.
type running struct {
	file string
	// listen is the -listen flag, which overrides the tcp listener's
	// address in every configuration the file gives, reloaded ones too
	// (overrideListen).
	listen   string
	builtins map[string][]string
	log      *slog.Logger
	level    *slog.LevelVar // log.level, which a reload sets
	srv      *server.Server
	sw       *router.Switch
	cfg      *config.Config
	snap     *config.Snapshot
	set      *listenerSet
	metrics  *metrics.Set // nil without an admin listener
	pid      *pidFile     // nil without -pidfile
	// fleet is the xDS client (fleet.go); nil without dynamic.xds.
	fleet *fleet
	// discovered is signalled when service discovery changed an
	// upstream's targets (rediscover).
	discovered chan struct{}
}

// signalDiscovery is BuildOptions.OnDiscover: it wakes the main loop,
// which runs rediscover (never blocking the watcher).
func signalDiscovery(ch chan struct{}) func() {
	return func() {
		select {
		case ch <- struct{}{}:
		default: // one is pending: it will see this change too
		}
	}
}

// rediscover gives the upstreams of the configuration in force (not the
// file: a pending edit waits for its SIGHUP) the targets service discovery
// now gives, as an xDS endpoint update does (applyTargets): the routes are
// not rebuilt; targets that stay keep their connections and health, the
// others drain. A snapshot that cannot be rebound is rebuilt as a reload
// would.
func (r *running) rediscover() {
	snap, err := r.snap.Rebind(r.cfg, r.buildOptions())
	if err == nil {
		snap.Commit()
		snap.Start(r.snap)
		r.snap.Close()
		r.snap = snap
		r.log.Info("service discovery: targets changed", "endpoints_only", true)
		return
	}
	if !errors.Is(err, config.ErrRebind) {
		r.log.Error("service discovery: rebind failed; keeping the running configuration", "err", err)
		return
	}
	snap, err = r.cfg.Refresh(r.buildOptions(), r.sw)
	if err != nil {
		r.log.Error("service discovery: rebuild failed; keeping the running configuration", "err", err)
		return
	}
	r.snap = snap
	r.log.Info("service discovery: targets changed", "endpoints_only", false)
}

// buildOptions are the options of a rebuild of the running snapshot:
// it is Previous; with a control plane or service discovery, routes are
// swappable (applyTargets, rediscover).
func (r *running) buildOptions() config.BuildOptions {
	return config.BuildOptions{Builtins: r.builtins, Schemes: targetSchemes, Logger: r.log, Previous: r.snap, Metrics: r.metrics,
		OnDiscover: signalDiscovery(r.discovered), Swappable: r.fleet != nil || r.cfg.Discovers()}
}

// reload applies the file's configuration as a whole or not at all, and
// publishes the outcome (recordOutcome), which it also returns. It
// refuses, naming the key, a change it cannot apply to a running server
// (checkReloadable), and keeps the running configuration on any error;
// "reloaded" is logged only once everything is applied. Order: build the
// new routes and upstreams, open the new listeners, then switch routes,
// limits and timeouts, serve the new listeners and stop the removed ones.
// Connections are never dropped: those of a removed listener are served
// to their end, and open connections keep the limits and timeouts they
// were accepted under (new ones get the new values).
func (r *running) reload() error {
	var err error
	if r.file == "" {
		err = errBuiltinReload
		r.log.Info("reload ignored: serving the built-in configuration")
	} else if err = r.apply(); err != nil {
		r.log.Error("reload failed; keeping the running configuration", "err", err)
	} else {
		r.log.Info("reloaded", "config", r.file, "routes", len(r.cfg.Routes), "addr", r.set.addrs)
	}
	r.recordOutcome(err, false)
	return err
}

// recordOutcome publishes a configuration load's outcome (the start's
// when first): the reload metrics, and the status file `simdedge
// reload` waits on.
func (r *running) recordOutcome(err error, first bool) {
	r.metrics.Reloads().Record(err == nil, time.Now())
	if werr := r.pid.record(err, configSummary(r.cfg), first); werr != nil {
		r.log.Warn("cannot write the pidfile's status file", "err", werr)
	}
}

func (r *running) apply() error {
	cfg, err := config.Load(r.file)
	if err != nil {
		return err
	}
	if err := overrideListen(cfg, r.listen); err != nil {
		return err
	}
	// With dynamic.xds, the file's static part goes beside what the
	// control plane last sent.
	if cfg, err = r.fleet.reload(cfg); err != nil {
		return err
	}
	return r.applyConfig(cfg)
}

// applyConfig makes cfg the running configuration, as a whole or not at
// all: a reload of the file, or an update from the control plane (which
// is NACKed when this fails).
func (r *running) applyConfig(cfg *config.Config) error {
	if err := checkReloadable(r.cfg, cfg); err != nil {
		return err
	}
	// Upstreams of the same name keep the health state and idle
	// connections of the targets that remain (Previous).
	snap, err := cfg.Build(r.buildOptions())
	if err != nil {
		return err
	}
	if err := r.set.checkTLSReload(cfg); err != nil {
		snap.Close()
		return err
	}
	added, removed := tcpDiff(r.cfg, cfg)
	fresh := &listenerSet{inherited: r.set.inherited, h3: cfg.HTTP3}
	for _, a := range added {
		if err := fresh.open(a.l, a.id, r.log); err != nil {
			fresh.closeListeners()
			snap.Close()
			return err
		}
	}
	// Everything that can fail has succeeded: switch.
	opts := cfg.ServerOptions()
	r.srv.Reconfigure(opts.Limits, opts.Timeouts)
	r.srv.SetTrustedProxies(opts.TrustedProxies)
	// Path normalisation: the top level's and each tcp listener's keys
	// apply to the connections accepted from now on.
	r.srv.SetPaths(opts.Paths)
	r.set.applyPaths(cfg, r.srv)
	fresh.applyPaths(cfg, r.srv)
	if err := r.set.applyTLS(cfg); err != nil {
		// checkTLSReload loaded the same files a moment ago: only a file
		// changed in between gets here, and that store keeps its old
		// certificates.
		r.log.Error("tls reload failed; that listener keeps its certificates", "err", err)
	}
	r.sw.Store(snap.Table)
	r.level.Set(logLevel(cfg.WithDefaults().Log.Level))
	// The new upstreams take over the targets they kept (and run the
	// checks); closing the old snapshot drains the targets that left.
	snap.Start(r.snap)
	r.snap.Close()
	r.snap, r.cfg = snap, cfg
	r.set.adopt(fresh, r.srv)
	r.set.stop(removed, r.srv)
	return nil
}

// applyTargets gives upstreams of the running configuration new targets
// (an update of endpoints alone, from xDS EDS): new upstreams, which keep
// the health and idle connections of the targets that stay, under the
// running routing table, which is not rebuilt, and no document parsed. It
// falls back to applyConfig when the routes cannot be rebound.
func (r *running) applyTargets(m map[string]config.TargetUpdate) error {
	cfg, err := r.cfg.WithTargets(m)
	if err != nil {
		return err
	}
	snap, err := r.snap.Rebind(cfg, r.buildOptions())
	if errors.Is(err, config.ErrRebind) {
		return r.applyConfig(cfg)
	}
	if err != nil {
		return err
	}
	snap.Commit()
	snap.Start(r.snap)
	r.snap.Close()
	r.snap, r.cfg = snap, cfg
	return nil
}

// listenerID names the i-th of a configuration's EffectiveListeners for a
// reload: its configured address, which is what makes a listener the same
// one across files; an address with port 0 names a fresh port each time it
// is opened, so such listeners are told apart by their position.
func listenerID(l config.Listener, i int) string {
	if l.Transport == config.TransportXDP && l.XDP != nil {
		// No address of its own: the interface and UDP port (an xdp
		// listener with http3 keeps its TLS store under this).
		return "xdp:" + l.XDP.Interface + ":" + strconv.Itoa(l.XDP.UDPPort)
	}
	if _, port, err := net.SplitHostPort(l.Address); err == nil && port == "0" {
		return l.Address + "#" + strconv.Itoa(i)
	}
	return l.Address
}

// idListener is a listener with its listenerID.
type idListener struct {
	id string
	l  config.Listener
}

// tcpAddrs maps each tcp listener's listenerID to its listener.
func tcpAddrs(c *config.Config) map[string]config.Listener {
	m := map[string]config.Listener{}
	for i, l := range c.EffectiveListeners() {
		if l.Transport == config.TransportTCP {
			m[listenerID(l, i)] = l
		}
	}
	return m
}

// tcpDiff lists the tcp listeners next has and prev has not (by
// listenerID) and the IDs prev has and next has not.
func tcpDiff(prev, next *config.Config) (added []idListener, removed []string) {
	was, is := tcpAddrs(prev), tcpAddrs(next)
	for i, l := range next.EffectiveListeners() {
		id := listenerID(l, i)
		if _, ok := was[id]; !ok && l.Transport == config.TransportTCP {
			added = append(added, idListener{id, l})
		}
	}
	for a := range was {
		if _, ok := is[a]; !ok {
			removed = append(removed, a)
		}
	}
	return added, removed
}

// checkReloadable refuses what a running server cannot change: the engine
// or loop count of a tcp listener that stays (its sockets and loops are
// open; move it to a new address instead), any xdp or rdma listener (their
// devices, rings and fabrics are set up at start), and proxy_on_loop
// (read when a loop starts). The error names the key.
func checkReloadable(prev, next *config.Config) error {
	if err := checkAdminReloadable(prev, next); err != nil {
		return err
	}
	if err := checkObserveReloadable(prev, next); err != nil {
		return err
	}
	if err := checkLogReloadable(prev, next); err != nil {
		return err
	}
	pe, ne := prev.WithDefaults(), next.WithDefaults()
	if *pe.ProxyOnLoop != *ne.ProxyOnLoop {
		return unreloadable("proxy_on_loop", "")
	}
	if pe.HTTP2 != ne.HTTP2 {
		// Read by each HTTP/2 connection from the server's options,
		// which a reload does not replace (only limits and timeouts).
		return unreloadable("http2", "")
	}
	if pe.HTTP3 != ne.HTTP3 {
		// Given to quic-go when each HTTP/3 socket opens.
		return unreloadable("http3", "")
	}
	was := tcpAddrs(prev)
	for i, l := range next.EffectiveListeners() {
		key := listenerKey(next, i)
		if l.Transport != config.TransportTCP {
			continue
		}
		old, ok := was[listenerID(l, i)]
		switch {
		case !ok:
		case old.Engine != l.Engine:
			if key == "listen" {
				return unreloadable("engine", "of the listener on "+l.Address)
			}
			return unreloadable(key+".engine", "")
		case old.Loops != l.Loops:
			return unreloadable(key+".loops", "")
		case (old.TLS == nil) != (l.TLS == nil):
			return unreloadable(key+".tls", "turning TLS on or off for a listener that stays")
		case old.RedirectToHTTPS != l.RedirectToHTTPS:
			return unreloadable(key+".redirect_to_https", "")
		case old.ProxyProtocol != l.ProxyProtocol:
			return unreloadable(key+".proxy_protocol", "")
		case !slices.Equal(old.Allow, l.Allow) || !slices.Equal(old.Deny, l.Deny):
			return unreloadable(key+".allow", "allow and deny of a listener that stays")
		case old.H2C != l.H2C:
			return unreloadable(key+".h2c", "")
		case old.HTTP3 != l.HTTP3:
			return unreloadable(key+".http3", "")
		}
	}
	po, no := otherListeners(prev), otherListeners(next)
	for i := range max(len(po), len(no)) {
		if i >= len(po) || i >= len(no) || !sameListener(po[i].l, no[i].l) {
			key := "listeners"
			if i < len(no) {
				key = no[i].key
			} else {
				key = po[i].key
			}
			return unreloadable(key, "xdp and rdma listeners")
		}
	}
	return nil
}

func unreloadable(key, what string) error {
	if what != "" {
		what = " (" + what + ")"
	}
	return fmt.Errorf("%s: cannot be changed by a reload%s; restart simdedge to change it", key, what)
}

type keyedListener struct {
	key string
	l   config.Listener
}

// otherListeners are c's xdp and rdma listeners, in order.
func otherListeners(c *config.Config) []keyedListener {
	var out []keyedListener
	for i, l := range c.EffectiveListeners() {
		if l.Transport != config.TransportTCP {
			out = append(out, keyedListener{listenerKey(c, i), l})
		}
	}
	return out
}

// listenerKey names the i-th of c.EffectiveListeners() as the file does.
func listenerKey(c *config.Config, i int) string {
	if c.Listen != "" || len(c.Listeners) == 0 {
		if i == 0 {
			return "listen"
		}
		i--
	}
	return fmt.Sprintf("listeners[%d]", i)
}

func sameListener(a, b config.Listener) bool {
	return a.Transport == b.Transport && a.Address == b.Address && a.Engine == b.Engine && a.Loops == b.Loops &&
		a.HTTP3 == b.HTTP3 && (a.TLS == nil) == (b.TLS == nil) &&
		reflect.DeepEqual(a.XDP, b.XDP) && reflect.DeepEqual(a.RDMA, b.RDMA)
}
