package proxy_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"

	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/proxy"
)

// A reverse proxy on the event-loop engine with LoopProxy on: the loop
// forwards the request over its own non-blocking keep-alive connection to
// the origin instead of handing the client connection to a goroutine.
// (Where there is no epoll, ServeTCP serves it on goroutines, same answers.)
func ExampleProxy_LoopProxy() {
	ol, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	origin := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "origin saw %s via %q\n", r.URL.Path, r.Header.Get("Via"))
	})}
	go origin.Serve(ol)
	defer origin.Close()

	up, err := proxy.NewUpstream(proxy.UpstreamOptions{Name: "app", Targets: []string{ol.Addr().String()}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer up.Close()
	s := server.New(server.Options{Handler: proxy.New(up, proxy.Options{}), LoopProxy: true})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	done := make(chan error, 1)
	go func() { done <- s.ServeTCP(l, server.EngineLoop) }()

	resp, err := http.Get("http://" + l.Addr().String() + "/hello")
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
	// 200 OK origin saw /hello via "1.1 simdedge"
	// server: closed
}
