//go:build fleet

package main

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"os"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/simdedge/simdedge/server/config"
	"github.com/simdedge/simdedge/server/edgetls"
	"github.com/simdedge/simdedge/server/xds"
	"go.yaml.in/yaml/v3"
)

// errFleetListen: -listen replaces the one tcp listener of a file; the
// listeners of a dynamic configuration come from the control plane.
var errFleetListen = errors.New("-listen cannot be combined with dynamic.xds: the listeners come from the control plane (or write listen in the file)")

// fleet follows the control plane of dynamic.xds: its client's Apply
// translates what arrives (server/xds), puts it beside the file's static
// part and hands the result to the serve loop, which applies it as a
// reload; the loop's verdict is the ACK or the NACK.
type fleet struct {
	x      *config.XDS
	file   string
	client *xds.Client
	cancel context.CancelFunc
	done   chan struct{}
	ch     chan fleetUpdate
	ctx    context.Context
	log    *slog.Logger

	mu sync.Mutex
	// static is the file (its bytes and parsed form); a reload replaces
	// it.
	static    []byte
	staticCfg *config.Config
	// last is the translation last applied, which a reload of the file
	// merges again.
	last *xds.Fragment
	// gen counts the reloads of the file (fleetUpdate.gen).
	gen int
	// started: the serve loop runs, updates go to ch; before, the
	// newest complete configuration waits in pending for initial.
	started bool
	pending *config.Config
	arrived chan struct{}
}

// checkFleet checks what the xDS client needs of the file beyond config:
// its TLS files.
func checkFleet(cfg *config.Config) error {
	x := cfg.XDS()
	if x == nil {
		return nil
	}
	_, err := fleetTLS(x)
	return err
}

func fleetTLS(x *config.XDS) (*tls.Config, error) {
	t := x.ClientTLS()
	if t == nil {
		return nil, nil
	}
	o := edgetls.ClientOptions{CA: t.CA, ServerName: t.ServerName, InsecureSkipVerify: t.InsecureSkipVerify}
	if t.ClientCert != nil {
		o.Cert = edgetls.CertFiles{Cert: t.ClientCert.Cert, Key: t.ClientCert.Key}
	}
	c, err := edgetls.ClientConfig(o)
	if err != nil {
		return nil, errors.New("dynamic.xds.tls: " + err.Error())
	}
	return c, nil
}

// startFleet starts the client when cfg has dynamic.xds (nil otherwise).
func startFleet(ctx context.Context, cfg *config.Config, file, listen string, log *slog.Logger) (*fleet, error) {
	x := cfg.XDS()
	if x == nil {
		return nil, nil
	}
	if listen != "" {
		return nil, errFleetListen
	}
	if file == "" {
		return nil, errors.New("dynamic.xds: needs a configuration file")
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	tc, err := fleetTLS(x)
	if err != nil {
		return nil, err
	}
	cctx, cancel := context.WithCancel(ctx)
	f := &fleet{x: x, file: file, cancel: cancel, done: make(chan struct{}), ch: make(chan fleetUpdate),
		ctx: cctx, log: log, static: b, staticCfg: cfg, arrived: make(chan struct{}, 1)}
	f.client = xds.New(xds.Options{Server: x.Server, NodeID: x.NodeID, Cluster: x.Cluster, TLS: tc, Apply: f.apply, Logger: log, Delta: x.Delta})
	go func() {
		defer close(f.done)
		f.client.Run(cctx)
	}()
	log.Info("xds: following the control plane", "server", x.Server, "node_id", x.NodeID)
	return f, nil
}

// apply is the client's Apply: translate, merge, and have the serve loop
// apply the result (or, before it runs, keep it for initial).
func (f *fleet) apply(r *xds.Resources) error {
	fr, err := xds.Translate(r)
	if err != nil {
		return err
	}
	f.mu.Lock()
	static, scfg, last, gen := f.static, f.staticCfg, f.last, f.gen
	f.mu.Unlock()
	if last != nil && reflect.DeepEqual(last, fr) {
		// A resource sent again unchanged (another type's update, a
		// reconnection): nothing to rebuild.
		return nil
	}
	up := fleetUpdate{gen: gen, fr: fr}
	if last != nil && sameButTargets(last, fr) {
		// Endpoints alone: no document to merge and parse again.
		up.targets = targetUpdates(fr)
	} else if up.cfg, err = xds.Merge(static, scfg, fr); err != nil {
		return err
	}
	f.mu.Lock()
	if !f.started {
		cfg := up.cfg
		if cfg == nil { // endpoints alone, before the start: merge after all
			if cfg, err = xds.Merge(static, scfg, fr); err != nil {
				f.mu.Unlock()
				return err
			}
		}
		f.pending, f.last = cfg, fr
		f.mu.Unlock()
		select {
		case f.arrived <- struct{}{}:
		default:
		}
		return nil
	}
	f.mu.Unlock()
	up.reply = make(chan error, 1)
	select {
	case f.ch <- up:
	case <-f.ctx.Done():
		return f.ctx.Err()
	}
	select {
	case err = <-up.reply:
	case <-f.ctx.Done():
		return f.ctx.Err()
	}
	if err == nil {
		f.mu.Lock()
		f.last = fr
		f.mu.Unlock()
	}
	return err
}

// sameButTargets reports whether a and b differ at most in their
// upstreams' targets (and the per-target connection caps derived from
// their count): an update of endpoints alone, which need not rebuild the
// routes.
func sameButTargets(a, b *xds.Fragment) bool {
	strip := func(f *xds.Fragment) xds.Fragment {
		c := *f
		c.Upstreams = slices.Clone(f.Upstreams)
		for i := range c.Upstreams {
			c.Upstreams[i].Targets, c.Upstreams[i].MaxConnsPerTarget = nil, 0
		}
		return c
	}
	return reflect.DeepEqual(strip(a), strip(b))
}

// targetUpdates are f's upstreams' targets, for running.applyTargets.
func targetUpdates(f *xds.Fragment) map[string]config.TargetUpdate {
	m := make(map[string]config.TargetUpdate, len(f.Upstreams))
	for _, u := range f.Upstreams {
		ts := make([]config.Target, len(u.Targets))
		for i, t := range u.Targets {
			ts[i] = config.Target{Address: t.Address, Weight: t.Weight}
		}
		m[u.Name] = config.TargetUpdate{Targets: ts, MaxConnsPerTarget: u.MaxConnsPerTarget}
	}
	return m
}

// initial waits for the first complete configuration from the control
// plane, for initial_fetch_timeout when the file has routes of its own
// (then it serves those alone until the control plane answers), and
// without end when it has none.
func (f *fleet) initial(ctx context.Context, cfg *config.Config) (*config.Config, error) {
	if f == nil {
		return cfg, nil
	}
	var timeout <-chan time.Time
	if len(cfg.Routes) > 0 {
		t := time.NewTimer(time.Duration(cfg.WithDefaults().XDS().InitialFetchTimeout))
		defer t.Stop()
		timeout = t.C
	} else {
		f.log.Info("xds: waiting for the control plane (the file has no routes of its own)")
	}
	select {
	case <-f.arrived:
	case <-timeout:
		f.log.Warn("xds: no configuration from the control plane within initial_fetch_timeout; serving the file's", "server", f.x.Server)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.started = true
	if f.pending != nil {
		cfg = f.pending
	}
	return cfg, nil
}

// current is the configuration of a full update as the serve loop
// applies it: merged again when the file was reloaded after the update
// was merged, so that the update does not bring back the old static
// part.
func (f *fleet) current(u fleetUpdate) (*config.Config, error) {
	f.mu.Lock()
	static, scfg, gen := f.static, f.staticCfg, f.gen
	f.mu.Unlock()
	if u.gen == gen {
		return u.cfg, nil
	}
	return xds.Merge(static, scfg, u.fr.(*xds.Fragment))
}

// updates are the configurations for the serve loop to apply.
func (f *fleet) updates() <-chan fleetUpdate {
	if f == nil {
		return nil
	}
	return f.ch
}

// reload is a reload of the file: its static part with the last
// translation beside it. dynamic.xds itself cannot change.
func (f *fleet) reload(cfg *config.Config) (*config.Config, error) {
	if f == nil {
		return cfg, checkFleet(cfg)
	}
	if !reflect.DeepEqual(cfg.XDS(), f.x) {
		return nil, unreloadable("dynamic.xds", "")
	}
	b, err := os.ReadFile(f.file)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	last := f.last
	f.mu.Unlock()
	merged := cfg
	if last != nil {
		if merged, err = xds.Merge(b, cfg, last); err != nil {
			return nil, err
		}
	}
	f.mu.Lock()
	f.static, f.staticCfg = b, cfg
	f.gen++
	f.mu.Unlock()
	return merged, nil
}

// stop ends the client and waits for it.
func (f *fleet) stop() {
	if f == nil {
		return
	}
	f.cancel()
	<-f.done
}

// adminConfig appends the client's state to the admin /config as the
// top-level key xds_status (not a configuration key: the admin shows it
// beside the configuration it explains, and a file with it is refused).
func (f *fleet) adminConfig(b []byte) []byte {
	if f == nil {
		return b
	}
	s, err := yaml.Marshal(map[string]xds.Status{"xds_status": f.client.Status()})
	if err != nil {
		return b
	}
	return append(b, s...)
}
