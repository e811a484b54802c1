package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/simdedge/simdedge/asm"
	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/config"
)

// demoBuiltin names the demo upstream in a configuration ("builtin: demo").
const demoBuiltin = "demo"

// demoHandler is the demo upstream: it says who it is and echoes what it
// was asked (method, target and every header field as it arrived, names
// in lower case as HTTP/2 writes them), so that a user of /demo/ sees the
// proxy's forwarding fields and checks a route's request_headers edits
// out of the box. It is text/plain with nosniff: a header value echoed
// back is never read as markup.
var demoHandler = server.HandlerFunc(func(w *server.ResponseWriter, r *server.Request) {
	w.AddHeader("Content-Type", "text/plain; charset=utf-8")
	w.AddHeader("X-Content-Type-Options", "nosniff")
	b := make([]byte, 0, demoBufSize)
	b = append(b, "hello from the simdedge demo upstream\nmethod: "...)
	b = append(b, r.Method()...)
	b = append(b, "\ntarget: "...)
	b = append(b, r.Target()...)
	b = append(b, "\nheaders:\n"...)
	for _, h := range r.Headers() {
		b = append(b, "  "...)
		n := len(b)
		b = append(b, h.Name...)
		asm.ToLowerInPlace(b[n:])
		b = append(b, ": "...)
		b = append(b, h.Value...)
		b = append(b, '\n')
	}
	w.Write(b)
})

// demoBufSize is the demo answer's first buffer: a request of a dozen
// fields fits.
const demoBufSize = 1024

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
