// Command idleconns is the client of bench/load/idle.sh: it opens -n
// keep-alive connections to one server, sends one GET on each, reads the
// whole response, and then holds every connection open and silent, so that
// the server's memory per idle connection can be read from outside. It
// prints "ready <n>" once all are idle, then waits for its standard input
// to close (or -hold to pass) and closes them.
//
// Modes: plain HTTP/1.1; -tls for HTTP/1.1 over TLS (ALPN http/1.1);
// -tls -h2 for HTTP/2 over TLS (ALPN h2, one stream). The client does not
// verify the server's certificate (the run's own, on 127.0.0.1).
// It raises its own RLIMIT_NOFILE to the hard limit; it dials loopback
// addresses only.
package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// ioTimeout bounds one connection's setup (dial, handshake, request,
// response): a server that stops answering fails the run.
const ioTimeout = 10 * time.Second

// workers open connections in parallel; few, so that the server sees
// connections arrive as a trickle rather than as a burst of handshakes.
const workers = 8

var errStatus = errors.New("idleconns: status is not 200 over the protocol asked for")

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "server address (loopback)")
	n := flag.Int("n", 5000, "connections")
	path := flag.String("path", "/healthz", "request path")
	useTLS := flag.Bool("tls", false, "TLS")
	h2 := flag.Bool("h2", false, "HTTP/2 (with -tls)")
	hold := flag.Duration("hold", 5*time.Minute, "longest time to hold the connections")
	flag.Parse()
	if host, _, err := net.SplitHostPort(*addr); err != nil || !net.ParseIP(host).IsLoopback() {
		fmt.Fprintln(os.Stderr, "idleconns: -addr must be a loopback address")
		os.Exit(2)
	}
	raiseNofile(uint64(*n) + 64)

	var (
		mu     sync.Mutex
		closer []io.Closer
		next   atomic.Int64
		failed atomic.Int64
		first  error
		wg     sync.WaitGroup
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(*n) {
				c, err := open(*addr, *path, *useTLS, *h2)
				mu.Lock()
				if err != nil {
					failed.Add(1)
					if first == nil {
						first = err
					}
				} else {
					closer = append(closer, c)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if first != nil {
		fmt.Fprintf(os.Stderr, "idleconns: %d connections failed, first: %v\n", failed.Load(), first)
		os.Exit(1)
	}
	fmt.Printf("ready %d\n", len(closer))
	done := make(chan struct{})
	go func() { io.Copy(io.Discard, os.Stdin); close(done) }()
	select {
	case <-done:
	case <-time.After(*hold):
	}
	for _, c := range closer {
		c.Close()
	}
}

// open dials, sends one request and reads its response; the connection
// stays open.
func open(addr, path string, useTLS, h2 bool) (io.Closer, error) {
	if h2 {
		return openH2(addr, path)
	}
	nc, err := net.DialTimeout("tcp", addr, ioTimeout)
	if err != nil {
		return nil, err
	}
	nc.SetDeadline(time.Now().Add(ioTimeout))
	if !useTLS {
		return nc, request1(nc, addr, path)
	}
	tc := tls.Client(nc, &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"http/1.1"}})
	if err := tc.Handshake(); err != nil {
		nc.Close()
		return nil, err
	}
	return tc, request1(tc, addr, path)
}

// h2Transport opens HTTP/2 connections over TLS, one per NewClientConn.
var h2Transport = func() *http.Transport {
	t := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}
	t.Protocols = new(http.Protocols)
	t.Protocols.SetHTTP2(true)
	return t
}()

// openH2 opens one HTTP/2 connection over TLS and sends one GET on it.
func openH2(addr, path string) (io.Closer, error) {
	ctx, cancel := context.WithTimeout(context.Background(), ioTimeout)
	defer cancel()
	cc, err := h2Transport.NewClientConn(ctx, "https", addr)
	if err != nil {
		return nil, err
	}
	req, _ := http.NewRequestWithContext(ctx, "GET", "https://"+addr+path, nil)
	resp, err := cc.RoundTrip(req)
	if err == nil {
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err == nil && (resp.StatusCode != 200 || resp.ProtoMajor != 2) {
			err = errStatus
		}
	}
	if err != nil {
		cc.Close()
		return nil, err
	}
	return cc, nil
}

// request1 sends one HTTP/1.1 GET on c and reads the response whole.
func request1(c net.Conn, addr, path string) error {
	if _, err := fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\n\r\n", path, addr); err != nil {
		c.Close()
		return err
	}
	resp, err := http.ReadResponse(bufio.NewReaderSize(c, 512), nil)
	if err == nil {
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err == nil && resp.StatusCode != 200 {
			err = errStatus
		}
	}
	c.SetDeadline(time.Time{})
	if err != nil {
		c.Close()
	}
	return err
}

// raiseNofile lifts the soft descriptor limit to at least want, within
// the hard limit.
func raiseNofile(want uint64) {
	var l syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l) != nil || l.Cur >= want {
		return
	}
	l.Cur = min(max(want, l.Cur), l.Max)
	syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l)
}
