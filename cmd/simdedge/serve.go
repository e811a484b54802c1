package main

import (
	"context"
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/admin"
	"github.com/simdedge/simdedge/server/config"
	"github.com/simdedge/simdedge/server/router"
)

//go:embed default.yaml
var defaultConfig []byte

// onListen, when set (by tests), receives the addresses the server listens
// on, in configuration order, which matters with "-listen 127.0.0.1:0".
var onListen func(addrs []string)

// runServe serves a configuration until ctx is cancelled (SIGTERM or
// SIGINT), then drains. SIGHUP reloads the file (reload.go): routes,
// upstreams, limits, timeouts and tcp listeners are applied together, or
// the reload is refused by key and nothing changes.
func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	file := fs.String("config", "", "YAML configuration file (default: the built-in configuration)")
	listen := fs.String("listen", "", "address to listen on, overriding the configuration's")
	if err := parseConfigArgs(fs, args, file); err != nil {
		return argsFailed(err, stderr)
	}
	log := slog.New(slog.NewJSONHandler(stderr, nil))
	cfg, err := loadConfig(*file)
	if err != nil {
		printConfigError(stderr, err)
		return 1
	}
	if *listen != "" {
		cfg.Listen = *listen
	}

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
	snap, err := cfg.Build(config.BuildOptions{Builtins: builtins, Schemes: targetSchemes, Logger: log, Metrics: mset})
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
	adm, err := startAdmin(cfg, mset, alog, lv, log)
	if err != nil {
		fmt.Fprintf(stderr, "simdedge: %v\n", err)
		snap.Close()
		return 1
	}
	defer adm.close()

	opened, err := openListeners(cfg, log)
	if err != nil {
		fmt.Fprintf(stderr, "simdedge: %v\n", err)
		snap.Close()
		return 1
	}
	defer opened.close()
	snap.Start(nil) // active health checks
	log.Info("serving", "addr", opened.addrs, "routes", len(cfg.Routes), "upstreams", snap.UpstreamNames(), "config", configName(*file))
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	if onListen != nil {
		onListen(opened.addrs)
	}
	opened.applyPaths(cfg, srv)
	served := opened.serve(srv)
	rt := &running{file: *file, listen: *listen, builtins: builtins, log: log, srv: srv, sw: sw, cfg: cfg, snap: snap, set: opened, metrics: mset}
	for {
		select {
		case <-hup:
			rt.reload()
			snap = rt.snap
			lv.store(rt.cfg, rt.snap)
			continue
		case err := <-served:
			if !errors.Is(err, server.ErrServerClosed) {
				srv.Close()
				log.Error("serve failed", "err", err)
				snap.Close()
				return 1
			}
		case <-ctx.Done():
			drain := time.Duration(rt.cfg.WithDefaults().Timeouts.Drain) // as last reloaded
			adm.setDraining()                                            // /ready turns 503 first
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

// runCheck validates a configuration and prints its effective form.
func runCheck(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	file := fs.String("config", "", "YAML configuration file (default: the built-in configuration)")
	// check prints secrets in clear by default: whoever runs it can read
	// the file it loads, and the output is a loadable configuration;
	// -redact prints what the admin /config shows, for a ticket or a CI log.
	redact := fs.Bool("redact", false, "hide secrets as the admin /config does")
	if err := parseConfigArgs(fs, args, file); err != nil {
		return argsFailed(err, stderr)
	}
	cfg, err := loadConfig(*file)
	if err != nil {
		printConfigError(stderr, err)
		return 1
	}
	// Build too, so that references a parse cannot see (handlers,
	// builtins) are checked; the builtin demo needs no running server.
	builtins := map[string][]string{}
	for _, u := range cfg.Upstreams {
		if u.Builtin == demoBuiltin {
			builtins[demoBuiltin] = []string{"127.0.0.1:1"}
		}
	}
	snap, err := cfg.Build(config.BuildOptions{Builtins: builtins, Schemes: targetSchemes})
	if err != nil {
		fmt.Fprintf(stderr, "simdedge: %v\n", err)
		return 1
	}
	snap.Close()
	if err := checkTLS(cfg, stderr); err != nil {
		fmt.Fprintf(stderr, "simdedge: %v\n", err)
		return 1
	}
	out, err := cfg.WithDefaults().YAML()
	if err == nil && *redact {
		out, err = admin.Redact(out)
	}
	if err != nil {
		fmt.Fprintf(stderr, "simdedge: %v\n", err)
		return 1
	}
	stdout.Write(out)
	return 0
}
