package servertest_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/servertest"
)

// A handler tested over both in-memory transports, without a socket.
func Example() {
	h := server.HandlerFunc(func(w *server.ResponseWriter, r *server.Request) {
		fmt.Fprintf(w, "hello %s\n", r.Target())
	})
	s := server.New(server.Options{Handler: h})
	streams, messages := servertest.NewStreamListener(), servertest.NewMessageListener(0)
	go s.ServeStream(streams)
	go s.ServeMessages(messages)
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.Shutdown(ctx)
	}()

	// A stream: a connection, as a client dials one.
	c, err := streams.Dial()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	go io.WriteString(c, "GET /stream HTTP/1.1\r\nHost: x\r\n\r\n") // net.Pipe is synchronous
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	b, _ := io.ReadAll(resp.Body)
	fmt.Print(resp.Status, " ", string(b))

	// A message: one request, its replies.
	replies, err := messages.Exchange([]byte("GET /message HTTP/1.1\r\nHost: x\r\n\r\n"))
	if err != nil {
		fmt.Println(err)
		return
	}
	resp, err = http.ReadResponse(bufio.NewReader(bytes.NewReader(bytes.Join(replies, nil))), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	b, _ = io.ReadAll(resp.Body)
	fmt.Print(resp.Status, " ", string(b))
	// Output:
	// 200 OK hello /stream
	// 200 OK hello /message
}
