package config

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/simdedge/simdedge/server/router"
	"github.com/simdedge/simdedge/server/upstream"
	"github.com/simdedge/simdedge/server/upstream/discover"
	"go.yaml.in/yaml/v3"
)

// Service discovery without a control plane (issue 32,
// server/upstream/discover):
//
//	upstreams:
//	  - name: api
//	    targets: ["api.internal:8080", "dns+srv://_http._tcp.api.internal"]
//	    resolve: {servers: ["10.0.0.2:53"], interval: 5s, respect_ttl: true, timeout: 2s, family: any}
//
// With resolve (given, or implied by a dns+srv:// target) the host names of
// the targets are looked up when the configuration is built and again when
// the answer's TTL runs out (respect_ttl, Envoy's name), or every interval
// where the resolver gives no TTL (the system resolver, used when servers
// is empty: nginx's resolver and valid=, Envoy's dns_refresh_rate). A
// dns+srv:// target takes host, port and weight from SRV records (the
// lowest priority; weight 0 counts as 1, above 1000 as 1000). A changed
// answer gives the upstreams new targets as an xDS endpoint update does
// (BuildOptions.OnDiscover, Snapshot.Rebind): the routes stay as they
// are, targets that stay keep their pooled connections and health state,
// targets that left drain. Config.Refresh, a rebuild as a reload does, is
// the fallback for a snapshot that cannot be rebound. Without
// resolve, a host name is looked up per new connection by the goroutine
// proxy, as before.

// Resolve is an upstream's resolve block.
type Resolve struct {
	Servers    []string `yaml:"servers,omitempty,flow"`
	Interval   Duration `yaml:"interval"`
	RespectTTL *bool    `yaml:"respect_ttl"`
	Timeout    Duration `yaml:"timeout"`
	Family     string   `yaml:"family"`
	line       int
}

func (d *decoder) resolve(dst **Resolve) func(*yaml.Node, string) {
	return func(v *yaml.Node, key string) {
		r := &Resolve{line: v.Line}
		*dst = r
		d.fields(v, key, map[string]func(*yaml.Node, string){
			"servers": func(v *yaml.Node, key string) {
				d.strings(&r.Servers)(v, key)
				for i, s := range r.Servers {
					if _, err := netip.ParseAddrPort(s); err != nil {
						d.fail(v.Content[i], fmt.Sprintf("%s[%d]", key, i), `must be "ip:port" such as "127.0.0.1:53"`)
					}
				}
			},
			"interval":    d.duration(&r.Interval),
			"respect_ttl": d.boolean(&r.RespectTTL),
			"timeout":     d.duration(&r.Timeout),
			"family": func(v *yaml.Node, key string) {
				d.str(&r.Family)(v, key)
				switch discover.Family(r.Family) {
				case discover.FamilyAny, discover.FamilyIPv4, discover.FamilyIPv6:
				default:
					d.fail(v, key, "must be any, ipv4 or ipv6")
				}
			},
		})
	}
}

// resolveDefaults fills the resolve block's defaults; an upstream with a
// dns+srv:// target and no block gets one.
func (u *Upstream) resolveDefaults() {
	if u.Resolve == nil && !hasSRVTarget(u.Targets) {
		return
	}
	r := Resolve{}
	if u.Resolve != nil {
		r = *u.Resolve
	}
	if r.Interval == 0 {
		r.Interval = Duration(discover.DefaultInterval)
	}
	if r.Timeout == 0 {
		r.Timeout = Duration(discover.DefaultTimeout)
	}
	if r.RespectTTL == nil {
		t := true
		r.RespectTTL = &t
	}
	if r.Family == "" {
		r.Family = string(discover.FamilyAny)
	}
	u.Resolve = &r
}

// Discovers reports whether an upstream of c resolves its targets (a
// resolve block or a dns+srv:// target): its snapshots are then built
// Swappable, so that a changed answer rebinds the proxy routes to new
// upstreams (Snapshot.Rebind) as an xDS endpoint update does, without
// rebuilding the routes.
func (c *Config) Discovers() bool {
	for _, u := range c.Upstreams {
		if u.Resolve != nil || hasSRVTarget(u.Targets) {
			return true
		}
	}
	return false
}

func hasSRVTarget(ts []Target) bool {
	for _, t := range ts {
		if strings.HasPrefix(t.Address, discover.SRVScheme) {
			return true
		}
	}
	return false
}

// srvTargetProblem judges a dns+srv:// target ("" when fine).
func srvTargetProblem(t string) string {
	if _, err := discover.ParseName(t, 0); err != nil {
		return `must be "dns+srv://NAME" with a DNS name such as _http._tcp.api.internal`
	}
	return ""
}

// validateResolve checks what resolve may not be combined with.
func (d *decoder) validateResolve(at *yaml.Node, key string, u *Upstream) {
	if u.Resolve == nil && !hasSRVTarget(u.Targets) {
		return
	}
	switch {
	case u.Builtin != "":
		d.fail(at, key+".resolve", "only for targets, not builtin")
	case u.IsTLS() && (u.TLS == nil || u.TLS.ServerName == ""):
		// Resolved targets are addresses: the name a certificate must
		// match cannot come from them.
		d.fail(at, key+".tls.server_name", "needed with resolve (the targets become addresses)")
	case u.IsHTTP2():
		d.fail(at, key+".resolve", "not for h2c:// or h2:// targets")
	}
	for i, t := range u.Targets {
		a, _, _ := webScheme(t.Address)
		if strings.Contains(a, "://") && !strings.HasPrefix(a, discover.SRVScheme) {
			d.fail(&yaml.Node{Line: t.line}, fmt.Sprintf("%s.targets[%d]", key, i), "resolve takes host:port, http(s)://host:port and dns+srv:// targets")
		}
	}
}

// resolver is the upstream's discovery options.
func (r *Resolve) options() discover.Options {
	return discover.Options{Servers: r.Servers, Interval: time.Duration(r.Interval), RespectTTL: r.RespectTTL == nil || *r.RespectTTL,
		Timeout: time.Duration(r.Timeout), Family: discover.Family(r.Family)}
}

// discoverySplit separates u's targets into those discovery resolves and
// those that stay as written (IP addresses). u has its defaults.
func (u *Upstream) discoverySplit(targets []string) (names []discover.Name, static []upstream.TargetSpec) {
	for i, a := range targets {
		n, err := discover.ParseName(a, u.Targets[i].Weight)
		if err != nil {
			static = append(static, upstream.TargetSpec{Address: a, Weight: u.Targets[i].Weight})
			continue
		}
		names = append(names, n)
	}
	return names, static
}

// discovered is an upstream's watcher in a Snapshot; owner is the
// snapshot running it (a rebuild that keeps the watcher moves it).
type discovered struct {
	w     *discover.Watcher
	mu    sync.Mutex
	owner *Snapshot
}

// discoverTargets returns u's targets with its names resolved, and the
// watcher, reused from the previous snapshot when it watches the same
// names the same way (its answer is current: no lookup now). nil targets
// and a message mean failure.
func (u *Upstream) discoverTargets(targets []string, o BuildOptions) ([]upstream.TargetSpec, *discovered, string) {
	names, static := u.discoverySplit(targets)
	if len(names) == 0 {
		return static, nil, ""
	}
	opts := u.Resolve.options()
	if o.NoDiscovery {
		// simdedge check: no network; the names stand as targets.
		for _, n := range names {
			port := n.Port
			if n.SRV {
				port = 1
			}
			static = append(static, upstream.TargetSpec{Address: fmt.Sprintf("%s:%d", strings.TrimPrefix(n.Host, "_"), port), Weight: n.Weight})
		}
		return static, nil, ""
	}
	var dv *discovered
	if o.Previous != nil {
		if p := o.Previous.discovery[u.Name]; p != nil && p.w.Same(names, opts) {
			dv = p
		}
	}
	if dv == nil {
		w := discover.NewWatcher(discover.New(opts), names, o.Logger)
		if err := w.Resolve(context.Background()); err != nil {
			return nil, nil, "cannot resolve: " + strings.TrimPrefix(err.Error(), "discover: ")
		}
		dv = &discovered{w: w}
	}
	out := append(static, dv.w.Targets()...)
	if len(out) > upstream.MaxTargets {
		return nil, nil, fmt.Sprintf("resolve gives more than %d targets", upstream.MaxTargets)
	}
	return out, dv, ""
}

// startDiscovery starts s's watchers (those not running already, under a
// previous snapshot) and stops prev's that s did not keep.
func (s *Snapshot) startDiscovery(prev *Snapshot) {
	for _, dv := range s.discovery {
		dv.mu.Lock()
		dv.owner = s
		dv.mu.Unlock()
		dv.w.Start(s.onDiscover)
	}
	if prev == nil {
		return
	}
	for name, dv := range prev.discovery {
		if s.discovery[name] != dv {
			dv.w.Stop()
		}
	}
}

// stopDiscovery stops the watchers s still owns (not those a newer
// snapshot took over); a snapshot never started owns none.
func (s *Snapshot) stopDiscovery() {
	for _, dv := range s.discovery {
		dv.mu.Lock()
		mine := dv.owner == s
		dv.mu.Unlock()
		if mine {
			dv.w.Stop()
		}
	}
}

// Refresh builds c again with o (o.Previous the running snapshot) and
// makes the result the running one: the routes go into sw, the upstreams
// take over the targets that stay, and the previous snapshot drains the
// others. It is what a discovery change (BuildOptions.OnDiscover) runs;
// on an error the running snapshot stays.
func (c *Config) Refresh(o BuildOptions, sw *router.Switch) (*Snapshot, error) {
	snap, err := c.Build(o)
	if err != nil {
		return nil, err
	}
	sw.Store(snap.Table)
	snap.Start(o.Previous)
	if o.Previous != nil {
		o.Previous.Close()
	}
	return snap, nil
}
