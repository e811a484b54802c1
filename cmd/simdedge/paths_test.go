package main

import (
	"bufio"
	"io"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/simdedge/simdedge/internal/testnet"
)

// TestPathKeysReload: the path normalisation keys from a file, at the top
// level and per listener, on both engines, and a SIGHUP that changes them
// for new connections (issue 27, item 4).
func TestPathKeysReload(t *testing.T) {
	for _, engine := range []string{"loop", "goroutine"} {
		t.Run(engine, func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, "c.yaml")
			a, b := freeAddr(t), freeAddr(t)
			conf := func(top, second string) string {
				return "engine: " + engine + "\n" + top + "listeners:\n  - address: \"" + a + "\"\n  - address: \"" + b + "\"\n" + second +
					"routes:\n  - match: {path_prefix: /admin/}\n    respond: {status: 403}\n  - echo: {}\n"
			}
			writeFile(t, file, conf("", "    normalize_path: false\n"))
			_, logs := startServeLogs(t, "-config", file)
			status := func(addr, target string) int {
				t.Helper()
				c := testnet.Dial(t, addr, 10*time.Second)
				defer c.Close() // closed on return: status runs many times
				io.WriteString(c, "GET "+target+" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
				resp, err := http.ReadResponse(bufio.NewReader(c), nil)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				return resp.StatusCode
			}
			for _, c := range []struct {
				addr, target string
				want         int
			}{
				{a, "/pub/../admin/x", 403}, // default: normalised, denied
				{b, "/pub/../admin/x", 200}, // the listener turned it off
				{a, "/pub/a%2Fb", 200},      // escaped_slashes: keep
			} {
				if got := status(c.addr, c.target); got != c.want {
					t.Errorf("before the reload, %s on %s: %d, want %d", c.target, c.addr, got, c.want)
				}
			}
			writeFile(t, file, conf("escaped_slashes: reject\n", ""))
			hup(t, logs)
			for _, c := range []struct {
				addr, target string
				want         int
			}{
				{a, "/pub/a%2Fb", 400},
				{b, "/pub/../admin/x", 403},
			} {
				if got := status(c.addr, c.target); got != c.want {
					t.Errorf("after the reload, %s on %s: %d, want %d", c.target, c.addr, got, c.want)
				}
			}
		})
	}
}
