// Command peers runs the servers simdedge is measured against, answering
// the same bytes as simdedge's /healthz route ("ok\n", text/plain, with
// Date and Content-Length): a net/http origin, a fasthttp origin, and a
// tuned httputil.ReverseProxy. bench/load/run.sh drives them with wrk.
package main

import (
	"flag"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"time"

	"github.com/valyala/fasthttp"
)

func main() {
	kind := flag.String("kind", "nethttp", "nethttp | fasthttp | revproxy")
	listen := flag.String("listen", "127.0.0.1:0", "listen address")
	upstream := flag.String("upstream", "", "revproxy: upstream host:port")
	flag.Parse()
	l, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatal(err)
	}
	switch *kind {
	case "nethttp":
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			w.Write([]byte("ok\n"))
		})
		log.Fatal((&http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}).Serve(l))
	case "fasthttp":
		s := &fasthttp.Server{
			Handler: func(ctx *fasthttp.RequestCtx) {
				ctx.SetContentType("text/plain")
				ctx.SetBodyString("ok\n")
			},
			NoDefaultServerHeader: true,
		}
		log.Fatal(s.Serve(l))
	case "revproxy":
		u, err := url.Parse("http://" + *upstream)
		if err != nil {
			log.Fatal(err)
		}
		rp := httputil.NewSingleHostReverseProxy(u)
		// Tuned as people tune it for benchmarks: a keep-alive pool large
		// enough for every load-generator connection, no compression.
		rp.Transport = &http.Transport{
			Proxy:               nil,
			MaxIdleConns:        4096,
			MaxIdleConnsPerHost: 4096,
			IdleConnTimeout:     90 * time.Second,
			DisableCompression:  true,
			ForceAttemptHTTP2:   false,
		}
		log.Fatal((&http.Server{Handler: rp, ReadHeaderTimeout: 10 * time.Second}).Serve(l))
	default:
		log.Fatalf("unknown kind %q", *kind)
	}
}
