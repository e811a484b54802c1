//go:build rdma && cgo

package rdma_test

import (
	"bytes"
	"context"
	"fmt"
	"log"
	"time"

	"github.com/simdedge/simdedge/rdma"
	"github.com/simdedge/simdedge/server"
)

// A backend serves HTTP requests arriving as RDMA messages (here over
// libfabric's tcp provider on loopback, a software provider, not RDMA
// hardware), and a client sends one. The request is parsed in place in the
// backend's registered receive buffer; the response arrives in the
// client's, valid during the callback.
func ExampleListenMessages() {
	ml, err := rdma.ListenMessages(rdma.ListenConfig{Address: "127.0.0.1:0", Provider: "tcp"})
	if err != nil {
		log.Fatal(err) // ErrNotSupported without -tags rdma, ErrNoProvider, ...
	}
	srv := server.New(server.Options{Handler: server.HandlerFunc(func(w *server.ResponseWriter, r *server.Request) {
		w.AddHeader("Content-Type", "text/plain")
		fmt.Fprintf(w, "hello %s\n", r.Target())
	})})
	go srv.ServeMessages(ml)
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	}()

	c, err := rdma.Dial(ml.Addr().String(), rdma.DialOptions{Provider: "tcp"})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	var resp []byte
	err = c.RoundTrip([]byte("GET /rdma HTTP/1.1\r\nHost: backend\r\n\r\n"), 5*time.Second,
		func(b []byte, more bool) error {
			resp = append(resp, b...) // b is only valid during the call
			return nil
		})
	if err != nil {
		log.Fatal(err)
	}
	status, _, _ := bytes.Cut(resp, []byte("\r\n"))
	_, body, _ := bytes.Cut(resp, []byte("\r\n\r\n"))
	fmt.Printf("%s\n%s", status, body)
	// Output:
	// HTTP/1.1 200 OK
	// hello /rdma
}
