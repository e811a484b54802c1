package proxy

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/simdedge/simdedge/internal/testenv"
	"github.com/simdedge/simdedge/server"
)

// TestConnectionCannotDropHost: a Connection option naming Host or a
// framing field removes nothing the message depends on (issue 27): the
// upstream gets the client's Host and the whole body, while a field
// named beside them is still dropped. Both proxy paths build the head
// with appendHead; the chunked case is the goroutine path's de-chunking.
func TestConnectionCannotDropHost(t *testing.T) {
	testenv.CheckGoroutines(t)
	o := startOrigin(t, headerEcho)
	addr, _ := startProxy(t, UpstreamOptions{Targets: []string{o.addr}}, server.Options{})
	for _, tc := range []struct{ name, req string }{
		{"length", "POST /p HTTP/1.1\r\nHost: vhost.example\r\nConnection: Host, Content-Length, Transfer-Encoding, X-Drop\r\n" +
			"X-Drop: 1\r\nContent-Length: 3\r\n\r\nabc"},
		{"chunked", "POST /p HTTP/1.1\r\nHost: vhost.example\r\nConnection: host, transfer-encoding, x-drop\r\n" +
			"X-Drop: 1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"},
		{"get", "GET /p HTTP/1.1\r\nHost: vhost.example\r\nConnection: HOST\r\n\r\n"},
	} {
		c, err := net.DialTimeout("tcp", addr, testTimeout)
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(testTimeout))
		io.WriteString(c, tc.req)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		b, _ := io.ReadAll(resp.Body)
		c.Close()
		var e echoed
		if resp.StatusCode != 200 || json.Unmarshal(b, &e) != nil {
			t.Errorf("%s: %d %q", tc.name, resp.StatusCode, b)
			continue
		}
		wantBody := "abc"
		if tc.name == "get" {
			wantBody = ""
		}
		if e.Host != "vhost.example" || e.Body != wantBody || e.Header.Get("X-Drop") != "" {
			t.Errorf("%s: upstream got host %q body %q X-Drop %q", tc.name, e.Host, e.Body, e.Header.Get("X-Drop"))
		}
	}
}
