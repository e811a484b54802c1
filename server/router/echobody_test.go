package router

import (
	"bufio"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/simdedge/simdedge/internal/testnet"
	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/internal/servetest"
)

// The echo route's answers to bodies it cannot take (issue 18), on each
// engine: 413 over the limit, chunked or not; 417 for an unknown
// expectation; 400 for a target with a fragment.
func TestEchoRejectsBodies(t *testing.T) {
	tab, err := New([]Route{{Match: Match{PathPrefix: "/echo"}, Handler: Echo()}})
	if err != nil {
		t.Fatal(err)
	}
	s := server.New(server.Options{Handler: tab, Limits: server.Limits{MaxBodyBytes: 10}})
	addr := servetest.Serve(t, s, testEngine)
	for _, tc := range []struct {
		name, req string
		status    int
	}{
		{"chunked over the limit", "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n8\r\n12345678\r\n8\r\n12345678\r\n0\r\n\r\n", 413},
		{"length over the limit", "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 11\r\n\r\n12345678901", 413},
		{"unknown expectation", "POST /echo HTTP/1.1\r\nHost: x\r\nExpect: x\r\nContent-Length: 1\r\n\r\n1", 417},
		{"fragment", "GET /echo#f HTTP/1.1\r\nHost: x\r\n\r\n", 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := testnet.Dial(t, addr, 10*time.Second)
			io.WriteString(c, tc.req)
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.status || !resp.Close {
				t.Errorf("status %d close=%v, want %d and close", resp.StatusCode, resp.Close, tc.status)
			}
		})
	}
}
