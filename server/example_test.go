package server_test

import (
	"bufio"
	"bytes"
	"fmt"
	"net/http"

	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/servertest"
)

// A handler over the in-memory message transport: the same handler serves
// kernel TCP with ServeStream.
func Example() {
	h := server.HandlerFunc(func(w *server.ResponseWriter, r *server.Request) {
		w.AddHeader("Content-Type", "text/plain")
		fmt.Fprintf(w, "hello %s\n", r.Target())
	})
	s := server.New(server.Options{Handler: h})
	l := servertest.NewMessageListener(0)
	go s.ServeMessages(l)
	defer s.Close()

	replies, _ := l.Exchange([]byte("GET /world HTTP/1.1\r\nHost: example\r\n\r\n"))
	resp, _ := http.ReadResponse(bufio.NewReader(bytes.NewReader(bytes.Join(replies, nil))), nil)
	var body bytes.Buffer
	body.ReadFrom(resp.Body)
	fmt.Print(resp.Status, " ", body.String())
	// Output: 200 OK hello /world
}
