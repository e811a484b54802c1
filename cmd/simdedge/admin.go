package main

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/simdedge/simdedge/server/accesslog"
	"github.com/simdedge/simdedge/server/admin"
	"github.com/simdedge/simdedge/server/config"
	"github.com/simdedge/simdedge/server/metrics"
	"github.com/simdedge/simdedge/server/upstream"
)

// adminReadHeaderTimeout bounds a slow admin client: the admin listener
// is loopback by default, but a stuck scraper must not hold a goroutine
// forever.
const adminReadHeaderTimeout = 10 * time.Second

// adminShutdown bounds the admin listener's own drain at exit.
const adminShutdown = 2 * time.Second

// live is what the admin endpoints read of the running configuration:
// the serve loop stores it after start and after every reload; the admin
// goroutines load it.
type live struct {
	cfg  atomic.Pointer[config.Config]
	snap atomic.Pointer[config.Snapshot]
}

func (l *live) store(c *config.Config, s *config.Snapshot) {
	l.cfg.Store(c)
	l.snap.Store(s)
}

// adminListener is the running admin listener (nil when off: its methods
// then do nothing).
type adminListener struct {
	a    *admin.Admin
	http *http.Server
	done chan struct{}
	addr string
}

// newMetrics returns the counters when the admin listener will publish
// them or the access log needs route names, nil otherwise (counting is
// then off entirely).
func newMetrics(cfg *config.Config) *metrics.Set {
	// The access log names each request's route from its counter block,
	// so it turns counting on too (unpublished without the admin
	// listener).
	if _, logged := cfg.AccessLogOptions(); !cfg.Admin.Enabled() && !logged {
		return nil
	}
	return metrics.NewSet()
}

// startAdmin opens the admin listener if the configuration has one.
func startAdmin(cfg *config.Config, m *metrics.Set, alog *accesslog.Log, lv *live, reload func(context.Context) (string, error), log *slog.Logger, fl *fleet) (*adminListener, error) {
	if !cfg.Admin.Enabled() {
		return nil, nil
	}
	a := admin.New(admin.Options{
		Metrics:    m,
		AccessLog:  alog,
		Transports: transportStats,
		Pools: func() map[string]*upstream.Pool {
			s := lv.snap.Load()
			out := make(map[string]*upstream.Pool, len(s.Upstreams))
			for name, u := range s.Upstreams {
				out[name] = u.Pool()
			}
			return out
		},
		Config: func() ([]byte, error) {
			b, err := lv.cfg.Load().WithDefaults().YAML()
			return fl.adminConfig(b), err
		},
		Collectors: fl.collectors(),
		PProf:      cfg.Admin.PProfOn(),
		Version:    buildVersion(),
		Reload:     reload,
	})
	ln, err := net.Listen("tcp", cfg.Admin.Address)
	if err != nil {
		return nil, errors.New("admin.address: " + listenReason(err))
	}
	al := &adminListener{a: a, done: make(chan struct{}), addr: ln.Addr().String(),
		http: &http.Server{Handler: a.Handler(), ReadHeaderTimeout: adminReadHeaderTimeout}}
	go func() {
		defer close(al.done)
		if err := al.http.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			log.Error("admin listener failed", "err", err)
		}
	}()
	log.Info("admin listening", "addr", al.addr, "pprof", cfg.Admin.PProfOn())
	return al, nil
}

// setDraining turns /ready to 503 (SIGTERM, before Shutdown).
func (al *adminListener) setDraining() {
	if al != nil {
		al.a.SetDraining()
	}
}

// close stops the admin listener and waits for it.
func (al *adminListener) close() {
	if al == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), adminShutdown)
	defer cancel()
	if al.http.Shutdown(ctx) != nil {
		al.http.Close()
	}
	<-al.done
}

// checkAdminReloadable: the admin listener is opened at start; a reload
// that changes it is refused by key.
func checkAdminReloadable(prev, next *config.Config) error {
	p, n := prev.WithDefaults().Admin, next.WithDefaults().Admin
	switch {
	case p.Address != n.Address:
		return unreloadable("admin.address", "")
	case *p.PProf != *n.PProf:
		return unreloadable("admin.pprof", "")
	case *p.Public != *n.Public:
		return unreloadable("admin.public", "")
	}
	return nil
}
