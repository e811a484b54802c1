// Command h3load is the h3 area's load generator: -conns connections, each
// with -streams requests in flight at once, GETs of -url until -d has
// passed, over HTTP/3 (quic-go's client) or, with -h2, HTTP/2 over TLS
// (net/http's client), so that both protocols are driven by Go clients of
// the same shape. It prints what bench/h3/run.sh reads:
//
//	requests <n>
//	errors <n>
//	seconds <wall seconds of the run>
//
// Every connection sends SNI -sni ("localhost": Caddy 2.6's QUIC stack
// answers a handshake without SNI with an internal error). It does not
// verify the server's certificate (the run's own): chain
// verification is client CPU that says nothing about the server.
package main

import (
	"crypto/tls"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
)

func main() {
	url := flag.String("url", "https://127.0.0.1:8443/", "URL to GET")
	conns := flag.Int("conns", 1, "connections")
	streams := flag.Int("streams", 8, "requests in flight per connection")
	d := flag.Duration("d", 5*time.Second, "duration")
	h2 := flag.Bool("h2", false, "HTTP/2 over TLS instead of HTTP/3")
	sni := flag.String("sni", "localhost", "TLS server name (Caddy 2.6 refuses QUIC handshakes without one)")
	flag.Parse()
	serverName = *sni
	n, errs, secs := run(*url, *conns, *streams, *d, *h2)
	fmt.Printf("requests %d\nerrors %d\nseconds %.3f\n", n, errs, secs)
	if n == 0 {
		os.Exit(1)
	}
}

// serverName is the SNI every connection sends.
var serverName string

// client is one connection's client: a transport per connection, so that
// each keeps its own QUIC or TCP connection.
func client(h2 bool) (*http.Client, func()) {
	// X25519 only, as hsload offers: Caddy 2.6's Go 1.19 stack knows no
	// post-quantum hybrid, so every server does the same key exchange.
	tc := &tls.Config{InsecureSkipVerify: true, CurvePreferences: []tls.CurveID{tls.X25519}, ServerName: serverName}
	if h2 {
		tr := &http.Transport{TLSClientConfig: tc, ForceAttemptHTTP2: true, MaxConnsPerHost: 1}
		return &http.Client{Transport: tr}, tr.CloseIdleConnections
	}
	tr := &http3.Transport{TLSClientConfig: tc, QUICConfig: &quic.Config{}}
	return &http.Client{Transport: tr}, func() { tr.Close() }
}

func run(url string, conns, streams int, d time.Duration, h2 bool) (n, errs int64, secs float64) {
	var done, failed atomic.Int64
	var first sync.Once
	var wg sync.WaitGroup
	start := time.Now()
	end := start.Add(d)
	for range conns {
		c, closeFn := client(h2)
		defer closeFn()
		for range streams {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for time.Now().Before(end) {
					resp, err := c.Get(url)
					if err != nil {
						// The first error says why, once (a peer that
						// speaks no HTTP/3 fails every request alike).
						first.Do(func() { fmt.Fprintln(os.Stderr, "h3load:", err) })
						failed.Add(1)
						continue
					}
					_, err = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if err != nil || resp.StatusCode != 200 {
						failed.Add(1)
						continue
					}
					done.Add(1)
				}
			}()
		}
	}
	wg.Wait()
	return done.Load(), failed.Load(), time.Since(start).Seconds()
}
