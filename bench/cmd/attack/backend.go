package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"
)

// backendReadHeader bounds the backend's wait for a request head, so that
// the suite's own backend is never what holds a connection open.
const backendReadHeader = 10 * time.Second

// backend is an in-process upstream that reads a request's whole body and
// answers 200 with the byte count: a healthy backend, however slowly the
// body comes.
type backend struct {
	srv  *http.Server
	addr string
	port int
}

func startBackend() (*backend, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(loopback, "0"))
	if err != nil {
		return nil, err
	}
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			n, err := io.Copy(io.Discard, r.Body)
			if err != nil {
				return
			}
			w.Header().Set("Content-Type", "text/plain")
			fmt.Fprintf(w, "read %d\n", n)
		}),
		ReadHeaderTimeout: backendReadHeader,
	}
	go srv.Serve(l)
	port := l.Addr().(*net.TCPAddr).Port
	return &backend{srv: srv, addr: net.JoinHostPort(loopback, strconv.Itoa(port)), port: port}, nil
}

// established counts the backend's ESTABLISHED connections: the proxy
// connections it holds.
func (b *backend) established() (int, error) {
	return establishedOnPort(b.port)
}

func (b *backend) close() { b.srv.Close() }
