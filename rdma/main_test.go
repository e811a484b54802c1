//go:build rdma && cgo

package rdma_test

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
)

// serveEnv narrows the ways the test backends serve requests:
// "inline" (the server's inline serve: a request whose handler is a
// server.Inliner runs on the connection's poller, the default),
// "goroutine" (ListenConfig.NoInline: every request through Receive and
// the server core's goroutines), or both, comma-separated. Benchmarks run
// once, in the first way named (inline unless told).
const serveEnv = "SIMDEDGE_TEST_RDMA_SERVE"

// noInline is set for the goroutine run: startBackend and the backend
// process then listen with NoInline.
var noInline bool

func serveModes() []string {
	v := os.Getenv(serveEnv)
	if v == "" {
		return []string{"inline", "goroutine"}
	}
	var out []string
	for _, m := range strings.Split(v, ",") {
		if m = strings.TrimSpace(m); m == "inline" || m == "goroutine" {
			out = append(out, m)
		}
	}
	return out
}

// TestMain runs the package's tests once per serve mode, so that the
// transport suite holds with the inline serve and without it.
func TestMain(m *testing.M) {
	code := 0
	for i, mode := range serveModes() {
		noInline = mode == "goroutine"
		if i > 0 {
			if b := flag.Lookup("test.bench"); b != nil && b.Value.String() != "" {
				break // benchmarks: one mode per run
			}
			if os.Getenv(backendEnv) == "1" {
				break
			}
		}
		fmt.Fprintf(os.Stderr, "--- rdma tests with the %s serve\n", mode)
		if code = m.Run(); code != 0 {
			fmt.Fprintf(os.Stderr, "--- FAIL with the %s serve\n", mode)
			break
		}
	}
	os.Exit(code)
}
