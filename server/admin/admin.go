package admin

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/pprof"
	"sort"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/simdedge/simdedge/server/accesslog"
	"github.com/simdedge/simdedge/server/metrics"
	"github.com/simdedge/simdedge/server/upstream"
)

// Options are what the admin endpoints read.
type Options struct {
	// Metrics are the server's counters (nil: none published).
	Metrics *metrics.Set
	// Pools returns the running upstream pools by name (it changes on
	// reload); nil: none.
	Pools func() map[string]*upstream.Pool
	// Config returns the effective configuration as YAML; Handler
	// redacts it. Nil: /config answers 404.
	Config func() ([]byte, error)
	// PProf serves net/http/pprof under /debug/pprof/.
	PProf bool
	// Version is the simdedge_build_info version label.
	Version string
	// AccessLog is the access log whose lines and drops are published
	// (nil: none).
	AccessLog *accesslog.Log
	// Reload reloads the configuration file and returns a summary of
	// what is now served, or why the reload was refused (ErrStopping:
	// not now). Nil: POST /reload answers 404.
	Reload func(ctx context.Context) (summary string, err error)
	// Transports returns the xdp and rdma transports' own counters at
	// scrape time (nil: none). The program supplies it: those packages
	// are not imported here (rdma needs cgo).
	Transports func() []TransportStat
	// Collectors are published beside the server's own (the xDS
	// client's state in a fleet build).
	Collectors []prometheus.Collector
}

// Admin serves the admin endpoints. SetDraining turns /ready to 503.
type Admin struct {
	o        Options
	reg      *prometheus.Registry
	draining atomic.Bool
	mux      *http.ServeMux
}

// New builds the registry (the server's collector, build info, Go runtime
// and process metrics) and the endpoints.
func New(o Options) *Admin {
	a := &Admin{o: o, reg: prometheus.NewRegistry(), mux: http.NewServeMux()}
	a.reg.MustRegister(
		&collector{set: o.Metrics, pools: o.Pools, log: o.AccessLog, transports: o.Transports},
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		buildInfo(o.Version),
	)
	a.reg.MustRegister(o.Collectors...)
	a.mux.Handle("/metrics", promhttp.HandlerFor(a.reg, promhttp.HandlerOpts{EnableOpenMetrics: true}))
	a.mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) { plain(w, http.StatusOK, "ok\n") })
	a.mux.HandleFunc("/ready", a.ready)
	a.mux.HandleFunc("/config", a.config)
	a.mux.HandleFunc("/upstreams", a.upstreams)
	if o.Reload != nil {
		a.mux.HandleFunc("/reload", a.reload)
	}
	if o.PProf {
		a.mux.HandleFunc("/debug/pprof/", pprof.Index)
		a.mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		a.mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		a.mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		a.mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	return a
}

// Handler returns the endpoints.
func (a *Admin) Handler() http.Handler { return a.mux }

// Registry is the registry /metrics serves (tests gather from it).
func (a *Admin) Registry() *prometheus.Registry { return a.reg }

// SetDraining marks the server as draining: /ready answers 503 from now
// on, so that load balancers stop sending before connections close.
func (a *Admin) SetDraining() { a.draining.Store(true) }

func (a *Admin) ready(w http.ResponseWriter, r *http.Request) {
	if a.draining.Load() {
		plain(w, http.StatusServiceUnavailable, "draining\n")
		return
	}
	plain(w, http.StatusOK, "ready\n")
}

func (a *Admin) config(w http.ResponseWriter, r *http.Request) {
	if a.o.Config == nil {
		http.NotFound(w, r)
		return
	}
	doc, err := a.o.Config()
	if err == nil {
		doc, err = Redact(doc)
	}
	if err != nil {
		plain(w, http.StatusInternalServerError, "admin: cannot render the config\n")
		return
	}
	w.Header().Set("Content-Type", "application/yaml")
	w.Write(doc)
}

// targetJSON is one target in /upstreams.
type targetJSON struct {
	Address  string `json:"address"`
	Weight   int    `json:"weight"`
	Health   string `json:"health"`
	Ejected  bool   `json:"ejected"`
	InFlight int64  `json:"in_flight"`
	Requests uint64 `json:"requests"`
	Failures uint64 `json:"failures"`
	Ejection uint64 `json:"ejections_total"`
}

type upstreamJSON struct {
	Name            string       `json:"name"`
	RetriesInFlight int64        `json:"retries_in_flight"`
	Targets         []targetJSON `json:"targets"`
}

func (a *Admin) upstreams(w http.ResponseWriter, r *http.Request) {
	out := []upstreamJSON{}
	if a.o.Pools != nil {
		for name, p := range a.o.Pools() {
			u := upstreamJSON{Name: name, RetriesInFlight: p.RetriesInFlight(), Targets: []targetJSON{}}
			for _, s := range p.Snapshot(nil) {
				u.Targets = append(u.Targets, targetJSON{Address: s.Address, Weight: s.Weight, Health: s.Health.String(),
					Ejected: s.Ejected, InFlight: s.InFlight, Requests: s.Requests, Failures: s.Failures, Ejection: s.EjectedTotal})
			}
			out = append(out, u)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(out)
}

func plain(w http.ResponseWriter, code int, body string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(code)
	w.Write([]byte(body))
}

// buildInfo is simdedge_build_info: 1, labelled with the version and Go's.
func buildInfo(version string) prometheus.Collector {
	if version == "" {
		version = "devel"
	}
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Namespace:   namespace,
		Name:        "build_info",
		Help:        "Always 1; the labels name the build.",
		ConstLabels: prometheus.Labels{"version": version, "goversion": goVersion()},
	}, func() float64 { return 1 })
}
