package server_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"

	"github.com/simdedge/simdedge/server"
)

// Serving kernel TCP on the event-loop engine: the handler only builds a
// response from the request, so Inline lets the loop run it without a
// goroutine (on systems without epoll, ServeTCP falls back to goroutines).
func ExampleServer_ServeTCP() {
	h := server.Inline(server.HandlerFunc(func(w *server.ResponseWriter, r *server.Request) {
		fmt.Fprintf(w, "hello %s\n", r.Target())
	}))
	s := server.New(server.Options{Handler: h})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	done := make(chan error, 1)
	go func() { done <- s.ServeTCP(l, server.EngineLoop) }()

	resp, err := http.Get("http://" + l.Addr().String() + "/loop")
	if err != nil {
		fmt.Println(err)
		return
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Print(resp.Status, " ", string(body))

	s.Shutdown(context.Background())
	fmt.Println(<-done)
	// Output:
	// 200 OK hello /loop
	// server: closed
}
