package main

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/config"
	"github.com/simdedge/simdedge/server/router"
)

//go:embed default.yaml
var defaultConfig []byte

const serveSynopsis = `usage: simdedge serve [-config FILE | FILE] [-listen ADDR] [-pidfile FILE]

Serves FILE (default: the built-in configuration, on 127.0.0.1:8080) until
SIGTERM or SIGINT, then drains: /ready answers 503, listeners close, open
requests finish within timeouts.drain. SIGHUP, ` + "`simdedge reload`" + ` and the
admin POST /reload load FILE again; what cannot change without a restart is
refused by name and the running configuration stays.

-listen ADDR replaces the address of the configuration's tcp listener (the
` + "`listen`" + ` key, or the one tcp entry of ` + "`listeners`" + `), keeping its other
settings; it is an error when the configuration has several tcp listeners.
With none (only xdp or rdma listeners), -listen adds a plain one.

`

// onListen, when set (by tests), receives the addresses the server listens
// on, in configuration order, which matters with "-listen 127.0.0.1:0".
var onListen func(addrs []string)

// runServe serves a configuration until ctx is cancelled (SIGTERM or
// SIGINT), then drains. SIGHUP reloads the file (reload.go): routes,
// upstreams, limits, timeouts and tcp listeners are applied together, or
// the reload is refused by key and nothing changes.
func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("serve", stderr)
	file := fs.String("config", "", "YAML configuration `FILE` (default: the built-in configuration)")
	listen := fs.String("listen", "", "serve on `ADDR` instead of the configuration's tcp listener (see above)")
	pidPath := fs.String("pidfile", "", "write the process ID to `FILE`, and reload outcomes to FILE.status (both removed at exit)")
	if err := parseConfigArgs(fs, args, file); err != nil {
		return argsFailed(err, fs, serveSynopsis, stdout, stderr)
	}
	// SIGHUP is caught from the start: its default action ends the
	// process, and once the pidfile is written `simdedge reload` may send
	// it at any time. One received during the start reloads after it.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	cfg, err := loadConfig(*file)
	if err != nil {
		printConfigError(stderr, err)
		return 1
	}
	log, logLevel := newLogger(cfg, stderr) // logging.go
	// With dynamic.xds (a fleet build), the control plane's first
	// complete configuration goes beside the file's before anything
	// starts (fleet.go).
	fl, err := startFleet(ctx, cfg, *file, *listen, log)
	if err != nil {
		fmt.Fprintf(stderr, "simdedge: %v\n", err)
		return 1
	}
	defer fl.stop()
	if cfg, err = fl.initial(ctx, cfg); err != nil {
		return 0 // stopped while waiting
	}
	if err := overrideListen(cfg, *listen); err != nil {
		fmt.Fprintf(stderr, "simdedge: %v\n", err)
		return 1
	}
	pid, err := openPIDFile(*pidPath, *file)
	if err != nil {
		fmt.Fprintf(stderr, "simdedge: %v\n", err)
		return 1
	}
	defer pid.close()

	builtins, stopBuiltins, err := startBuiltins(cfg, log)
	if err != nil {
		fmt.Fprintf(stderr, "simdedge: %v\n", err)
		return 1
	}
	defer stopBuiltins()
	alog, stopLog, err := openAccessLog(cfg, log)
	if err != nil {
		fmt.Fprintf(stderr, "simdedge: %v\n", err)
		return 1
	}
	defer stopLog()
	mset := newMetrics(cfg)
	discovered := make(chan struct{}, 1)
	snap, err := cfg.Build(config.BuildOptions{Builtins: builtins, Schemes: targetSchemes, Logger: log, Metrics: mset, OnDiscover: signalDiscovery(discovered),
		Swappable: fl != nil || cfg.Discovers()})
	if err != nil {
		fmt.Fprintf(stderr, "simdedge: %v\n", err)
		return 1
	}
	sw := router.NewSwitch(snap.Table)
	opts := cfg.ServerOptions()
	opts.Handler = sw
	opts.Logger = log
	opts.Metrics = mset
	opts.AccessLog = alog
	srv := server.New(opts)
	lv := &live{}
	lv.store(cfg, snap)
	rl := newReloader()
	defer rl.stop()
	adm, err := startAdmin(cfg, mset, alog, lv, rl.request, log, fl)
	if err != nil {
		fmt.Fprintf(stderr, "simdedge: %v\n", err)
		snap.Close()
		return 1
	}
	defer adm.close()

	// Sockets passed by systemd (activation.go) stand in for the
	// listeners bound to their addresses.
	inh, err := takeInherited()
	if err != nil {
		fmt.Fprintf(stderr, "%v\n", err)
		snap.Close()
		return 1
	}
	defer inh.close()
	opened, err := openListeners(cfg, log, inh)
	if err != nil {
		fmt.Fprintf(stderr, "simdedge: %v\n", err)
		snap.Close()
		return 1
	}
	defer opened.close()
	inh.logUnused(log)
	snap.Start(nil) // active health checks
	log.Info("serving", "addr", opened.addrs, "routes", len(cfg.Routes), "upstreams", snap.UpstreamNames(), "config", configName(*file))
	if onListen != nil {
		onListen(opened.addrs)
	}
	opened.applyPaths(cfg, srv)
	served := opened.serve(srv)
	rt := &running{file: *file, listen: *listen, builtins: builtins, log: log, level: logLevel, srv: srv, sw: sw, cfg: cfg, snap: snap, set: opened, metrics: mset, pid: pid, discovered: discovered, fleet: fl}
	rt.recordOutcome(nil, true)
	for {
		select {
		case <-hup:
			rt.reload()
			snap = rt.snap
			lv.store(rt.cfg, rt.snap)
			continue
		case u := <-fl.updates(): // from the control plane (fleet.go)
			var err error
			if u.targets != nil {
				err = rt.applyTargets(u.targets)
			} else if cfg, merr := fl.current(u); merr != nil {
				err = merr
			} else {
				err = rt.applyConfig(cfg)
			}
			if err == nil {
				log.Info("xds: applied", "routes", len(rt.cfg.Routes), "upstreams", len(rt.cfg.Upstreams), "addr", rt.set.addrs,
					"endpoints_only", u.targets != nil)
			}
			snap = rt.snap
			lv.store(rt.cfg, rt.snap)
			u.reply <- err
			continue
		case <-discovered: // resolve: an upstream's targets changed
			rt.rediscover()
			snap = rt.snap
			lv.store(rt.cfg, rt.snap)
			continue
		case reply := <-rl.reqs: // admin POST /reload, the same reload
			err := rt.reload()
			snap = rt.snap
			lv.store(rt.cfg, rt.snap)
			reply <- reloadResult{configSummary(rt.cfg), err}
			continue
		case err := <-served:
			if !errors.Is(err, server.ErrServerClosed) {
				srv.Close()
				log.Error("serve failed", "err", err)
				snap.Close()
				return 1
			}
		case <-ctx.Done():
			// POST /reload answers 503 from now on.
			rl.stop()
			timeouts := rt.cfg.WithDefaults().Timeouts // as last reloaded
			drain := time.Duration(timeouts.Drain)
			drainDelay(srv, adm, time.Duration(timeouts.DrainDelay), log) // /ready turns 503 first
			log.Info("draining", "timeout", drain.String())
			dctx, cancel := context.WithTimeout(context.Background(), drain)
			err := srv.Shutdown(dctx)
			cancel()
			opened.wait()
			snap.Close()
			if err != nil {
				log.Warn("drain timed out; connections closed", "err", err)
				return 1
			}
			log.Info("stopped")
			return 0
		}
		snap.Close()
		return 0
	}
}

func loadConfig(file string) (*config.Config, error) {
	if file == "" {
		return config.Parse(defaultConfig)
	}
	return config.Load(file)
}

func configName(file string) string {
	if file == "" {
		return "(built-in)"
	}
	return file
}

func listenReason(err error) string {
	if errors.Is(err, syscall.EADDRINUSE) {
		return "the address is already in use (another process listens there)"
	}
	if errors.Is(err, syscall.EACCES) {
		return "permission denied (ports below 1024 need privileges)"
	}
	return err.Error()
}
