package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/config"
)

// demoBuiltin names the demo upstream in a configuration ("builtin: demo").
const demoBuiltin = "demo"

// demoHandler is the demo upstream: it says who it is and what it was
// asked, so a user of /demo/ sees the proxy's forwarding fields.
var demoHandler = server.HandlerFunc(func(w *server.ResponseWriter, r *server.Request) {
	xff, _ := r.Header("X-Forwarded-For")
	via, _ := r.Header("Via")
	w.AddHeader("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprintf(w, "hello from the simdedge demo upstream\nmethod: %s\ntarget: %s\nx-forwarded-for: %s\nvia: %s\n",
		r.Method(), r.Target(), xff, via)
})

// startBuiltins starts the builtin upstreams the configuration uses, each
// on its own loopback port, and returns their targets.
func startBuiltins(cfg *config.Config, log *slog.Logger) (map[string][]string, func(), error) {
	targets := map[string][]string{}
	var stops []func()
	stop := func() {
		for _, s := range stops {
			s()
		}
	}
	for _, u := range cfg.Upstreams {
		if u.Builtin == "" || targets[u.Builtin] != nil {
			continue
		}
		if u.Builtin != demoBuiltin {
			stop()
			return nil, nil, fmt.Errorf("upstream %q: unknown builtin (this program has %q)", u.Name, demoBuiltin)
		}
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			stop()
			return nil, nil, fmt.Errorf("demo upstream: %w", err)
		}
		s := server.New(server.Options{Handler: demoHandler, Logger: log})
		done := make(chan struct{})
		go func() { s.ServeStream(server.TCPListener(l)); close(done) }()
		stops = append(stops, func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			s.Shutdown(ctx)
			cancel()
			<-done
		})
		targets[demoBuiltin] = []string{l.Addr().String()}
		log.Info("demo upstream started", "addr", l.Addr().String())
	}
	return targets, stop, nil
}
