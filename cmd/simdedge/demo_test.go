package main

import (
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDemoEchoesHeaders: the demo upstream answers with the request's
// method, target and header fields as they reached it, so a route's
// request_headers edits show: the added field is there, the removed one
// is not, the client's own field and the proxy's Via are. On the goroutine
// engine and on the loop with its own proxy.
func TestDemoEchoesHeaders(t *testing.T) {
	for _, e := range []struct{ engine, onLoop string }{{"goroutine", "false"}, {"loop", "true"}} {
		t.Run(e.engine, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "c.yaml")
			writeFile(t, file, fmt.Sprintf(`engine: %s
proxy_on_loop: %s
upstreams:
  - name: demo
    builtin: demo
routes:
  - match: {path_prefix: /demo/}
    proxy: {upstream: demo}
    request_headers: {set: {X-Edge: added}, remove: [X-Secret]}
`, e.engine, e.onLoop))
			addr := startServe(t, "-config", file)
			c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{}}
			defer c.CloseIdleConnections()
			req, _ := http.NewRequest("PUT", "http://"+addr+"/demo/a?b=1", strings.NewReader("x"))
			req.Header.Set("X-Probe", "One Two")
			req.Header.Set("X-Secret", "s3cret")
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			raw, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			body := string(raw)
			if resp.StatusCode != 200 || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
				t.Errorf("status %d, nosniff %q", resp.StatusCode, resp.Header.Get("X-Content-Type-Options"))
			}
			for _, want := range []string{"method: PUT\n", "target: /demo/a?b=1\n", "\n  x-probe: One Two\n", "\n  x-edge: added\n", "\n  via: 1.1 simdedge\n", "\n  content-length: 1\n"} {
				if !strings.Contains(body, want) {
					t.Errorf("no %q in the demo's answer:\n%s", want, body)
				}
			}
			if strings.Contains(body, "s3cret") {
				t.Errorf("the removed field reached the demo:\n%s", body)
			}
		})
	}
}
