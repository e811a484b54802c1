package router_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"

	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/router"
	"github.com/simdedge/simdedge/server/servertest"
)

func Example() {
	table, err := router.New([]router.Route{
		{Match: router.Match{PathPrefix: "/healthz"}, Handler: router.Respond(200, "ok\n", nil)},
		{Match: router.Match{Host: "*.example.com", PathPrefix: "/", Methods: []string{"GET"}},
			Handler: router.Respond(200, "wildcard\n", nil)},
	})
	if err != nil {
		panic(err)
	}
	s := server.New(server.Options{Handler: router.NewSwitch(table)})
	l := servertest.NewMessageListener(0)
	go s.ServeMessages(l)
	defer s.Close()
	for _, req := range []string{
		"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n",
		"GET /x HTTP/1.1\r\nHost: api.example.com\r\n\r\n",
		"POST /x HTTP/1.1\r\nHost: api.example.com\r\nContent-Length: 0\r\n\r\n",
	} {
		replies, _ := l.Exchange([]byte(req))
		resp, _ := http.ReadResponse(bufio.NewReader(bytes.NewReader(bytes.Join(replies, nil))), nil)
		body, _ := io.ReadAll(resp.Body)
		fmt.Printf("%d %q\n", resp.StatusCode, body)
	}
	// Output:
	// 200 "ok\n"
	// 200 "wildcard\n"
	// 404 "not found\n"
}
