// Command benchpeer is a load-benchmark peer that benchrun starts and stops:
// a minimal origin written with net/http or fasthttp, or a reverse proxy
// built on httputil.ReverseProxy. Every origin answers every request with the
// same small body, so the servers differ only in how they parse, route and
// write.
//
// Usage:
//
//	benchpeer -mode net_http  -listen 127.0.0.1:18081
//	benchpeer -mode fasthttp  -listen 127.0.0.1:18082
//	benchpeer -mode httputil  -listen 127.0.0.1:18083 -upstream 127.0.0.1:18084
//
// It prints "ready" on stdout once it accepts connections and exits on
// SIGTERM or SIGINT.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/valyala/fasthttp"
)

// body is the response of every origin; benchrun's generated nginx and
// simdedge configurations answer with the same bytes.
const body = "hello, world\n"

// maxIdle is the idle keep-alive connections the reverse proxy keeps to its
// upstream. It is above wrk's connection count so that no request opens a
// new upstream connection: the default (2 per host) makes
// httputil.ReverseProxy measure TCP handshakes instead of proxying.
const maxIdle = 1024

func main() {
	mode := flag.String("mode", "net_http", "net_http, fasthttp or httputil")
	listen := flag.String("listen", "127.0.0.1:0", "address to listen on (loopback)")
	upstream := flag.String("upstream", "", "host:port the httputil proxy forwards to")
	flag.Parse()
	if err := run(*mode, *listen, *upstream); err != nil {
		fmt.Fprintln(os.Stderr, "benchpeer:", err)
		os.Exit(1)
	}
}

func run(mode, listen, upstream string) error {
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	var serve func() error
	var shutdown func() error
	switch mode {
	case "net_http", "httputil":
		var h http.Handler = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			_, _ = w.Write([]byte(body))
		})
		if mode == "httputil" {
			if upstream == "" {
				return fmt.Errorf("mode httputil needs -upstream")
			}
			h = newProxy(upstream)
		}
		srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
		serve = func() error { return srv.Serve(ln) }
		shutdown = func() error { return srv.Close() }
	case "fasthttp":
		srv := &fasthttp.Server{Handler: func(c *fasthttp.RequestCtx) {
			c.SetContentType("text/plain")
			c.SetBodyString(body)
		}}
		serve = func() error { return srv.Serve(ln) }
		shutdown = srv.Shutdown
	default:
		return fmt.Errorf("unknown mode %q", mode)
	}
	errc := make(chan error, 1)
	go func() { errc <- serve() }()
	fmt.Println("ready")
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		return shutdown()
	}
}

// newProxy is httputil.ReverseProxy with the Transport tuned the way an
// operator would for a single busy upstream.
func newProxy(upstream string) *httputil.ReverseProxy {
	target := &url.URL{Scheme: "http", Host: upstream}
	tr := &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        maxIdle,
		MaxIdleConnsPerHost: maxIdle,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
	return &httputil.ReverseProxy{
		Rewrite:   func(r *httputil.ProxyRequest) { r.SetURL(target); r.SetXForwarded() },
		Transport: tr,
	}
}
