// Command hsload is benchrun's handshake-rate client: it opens a new TLS
// connection for every request, with no session cache, so every
// connection is a full TLS 1.3 handshake (wrk over https resumes nothing
// either, but it keeps connections open; with "Connection: close" it
// reconnects through OpenSSL, whose client session reuse benchrun does
// not control). Each of -conns goroutines dials, sends one GET with
// "Connection: close", reads the whole response and closes, until -d has
// passed. It prints what benchrun's https area parses (see
// cmd/benchrun/handshake.go):
//
//	handshakes <n>
//	errors <n>
//	seconds <wall seconds of the run>
//	p50-ns <latency of dial+handshake+request> (also p75, p90, p99)
//
// The client does not verify the server's chain (the certificate is the
// run's own, from 127.0.0.1): chain verification costs the client an
// ECDSA verification per handshake that says nothing about the server,
// and the client's CPU is the rig's ceiling on this machine. It does
// verify the handshake's CertificateVerify signature (crypto/tls always
// does), so the server signs as it would for any client. Key exchange is
// X25519 only, what an OpenSSL 3.0 client (wrk, curl) offers here, so
// that a Go server does not pick the post-quantum hybrid that nginx's
// OpenSSL lacks.
package main

import (
	"bufio"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// maxSamples bounds the latencies kept per goroutine for the percentiles
// (memory stays bounded however fast the server is).
const maxSamples = 1 << 16

// ioTimeout bounds one connection (dial, handshake, request, response):
// a server that stops answering ends that connection as an error, not the
// run.
const ioTimeout = 5 * time.Second

var percentiles = []float64{50, 75, 90, 99}

var errStatus = errors.New("hsload: status is not 200")

func main() {
	addr := flag.String("addr", "127.0.0.1:8443", "server address")
	conns := flag.Int("conns", 64, "concurrent connections (goroutines)")
	d := flag.Duration("d", 10*time.Second, "duration")
	name := flag.String("servername", "localhost", "SNI server name")
	flag.Parse()
	if *conns < 1 || *d <= 0 {
		fmt.Fprintln(os.Stderr, "hsload: -conns and -d must be positive")
		os.Exit(2)
	}
	cfg := &tls.Config{
		ServerName:         *name,
		InsecureSkipVerify: true, // see the package comment
		MinVersion:         tls.VersionTLS13,
		MaxVersion:         tls.VersionTLS13,
		CurvePreferences:   []tls.CurveID{tls.X25519},
		// ClientSessionCache nil: no tickets are stored, nothing resumes.
	}
	req := []byte("GET / HTTP/1.1\r\nHost: " + *name + "\r\nConnection: close\r\n\r\n")
	var ok, fails atomic.Int64
	var mu sync.Mutex
	var lat []time.Duration
	var firstErr error
	start := time.Now()
	end := start.Add(*d)
	var wg sync.WaitGroup
	for range *conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			for time.Now().Before(end) {
				t := time.Now()
				if err := once(*addr, cfg, req); err != nil {
					fails.Add(1)
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					continue
				}
				ok.Add(1)
				if len(mine) < maxSamples {
					mine = append(mine, time.Since(t))
				}
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	wall := time.Since(start)
	fmt.Printf("handshakes %d\nerrors %d\nseconds %.6f\n", ok.Load(), fails.Load(), wall.Seconds())
	slices.Sort(lat)
	for _, p := range percentiles {
		if len(lat) > 0 {
			i := min(len(lat)-1, int(p/100*float64(len(lat))))
			fmt.Printf("p%.0f-ns %d\n", p, lat[i].Nanoseconds())
		}
	}
	if firstErr != nil {
		fmt.Printf("first-error %v\n", firstErr)
	}
}

// once is one connection: a full handshake, one request, its response.
func once(addr string, cfg *tls.Config, req []byte) error {
	raw, err := net.DialTimeout("tcp", addr, ioTimeout)
	if err != nil {
		return err
	}
	defer raw.Close()
	_ = raw.SetDeadline(time.Now().Add(ioTimeout))
	c := tls.Client(raw, cfg)
	if err := c.Handshake(); err != nil {
		return err
	}
	if _, err := c.Write(req); err != nil {
		return err
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return errStatus
	}
	return nil
}
