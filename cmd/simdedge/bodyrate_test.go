package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// The body's minimum rate end to end (issue 18, item 3): configured through
// timeouts.body_min_rate and body_rate_window, a trickled body to /echo or
// to a proxy route is answered 408 on each engine and proxy path.
func TestServeTrickledBody408(t *testing.T) {
	const (
		window = 500 * time.Millisecond
		every  = 100 * time.Millisecond // 10 B/s against a minimum of 1,000
		bound  = 8 * time.Second        // the trickle's length: far beyond window
	)
	for _, engine := range []string{"engine: goroutine", "engine: loop\nproxy_on_loop: true", "engine: loop\nproxy_on_loop: false"} {
		t.Run(engine, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "c.yaml")
			os.WriteFile(file, []byte(engine+`
timeouts: {idle: 60s, body_min_rate: 1000, body_rate_window: 500ms}
upstreams:
  - {name: demo, builtin: demo}
routes:
  - match: {path_prefix: /echo}
    echo: {}
  - match: {path_prefix: /demo/}
    proxy: {upstream: demo}
`), 0o644)
			addr := startServe(t, "-config", file)
			for _, path := range []string{"/echo", "/demo/x"} {
				c, err := net.DialTimeout("tcp", addr, 10*time.Second)
				if err != nil {
					t.Fatal(err)
				}
				start := time.Now()
				fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n", path)
				stop := make(chan struct{})
				done := make(chan struct{})
				go func() {
					defer close(done)
					for time.Since(start) < bound {
						select {
						case <-stop:
							return
						case <-time.After(every):
						}
						if _, err := io.WriteString(c, "x"); err != nil {
							return
						}
					}
				}()
				c.SetReadDeadline(start.Add(bound))
				line, err := bufio.NewReader(c).ReadString('\n')
				took := time.Since(start)
				close(stop)
				<-done
				c.Close()
				if err != nil {
					t.Fatalf("%s: no answer while trickling for %v: %v", path, bound, err)
				}
				if line != "HTTP/1.1 408 Request Timeout\r\n" || took < window {
					t.Errorf("%s: %q after %v, want 408 after at least %v", path, line, took, window)
				}
			}
		})
	}
}
