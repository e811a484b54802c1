package stdhttp_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/stdhttp"
)

// A net/http mux served by simdedge. The handler's context ends when the
// client goes away, as it would under net/http.
func Example() {
	mux := http.NewServeMux()
	mux.HandleFunc("/hello", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello, %s\n", r.URL.Query().Get("name"))
	})
	s := server.New(server.Options{Handler: stdhttp.Handler(mux)})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	go s.ServeTCP(ln, server.EngineGoroutine)
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.Shutdown(ctx)
	}()

	resp, err := http.Get("http://" + ln.Addr().String() + "/hello?name=edge")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	fmt.Print(resp.Status, " ", string(b))
	// Output: 200 OK hello, edge
}
