package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/simdedge/simdedge/internal/testenv"
	"github.com/simdedge/simdedge/internal/testnet"
	"github.com/simdedge/simdedge/internal/testproc"
	"github.com/simdedge/simdedge/server/config"
)

// syncBuffer is a bytes.Buffer safe for the server's log writes.
type syncBuffer = testproc.Output

// startServe runs `simdedge serve args...` in-process on 127.0.0.1:0 and
// returns its address; cleanup cancels it (as SIGTERM does) and checks it
// drained with status 0.
func startServe(t *testing.T, args ...string) string {
	t.Helper()
	return startServeAll(t, append(args, "-listen", "127.0.0.1:0")...)[0]
}

// startServeAll is startServe without the -listen override: it returns
// every listener's address.
func startServeAll(t *testing.T, args ...string) []string {
	t.Helper()
	addrs, _ := startServeLogs(t, args...)
	return addrs
}

// startServeLogs is startServeAll that also returns the server's log.
func startServeLogs(t *testing.T, args ...string) ([]string, *syncBuffer) {
	t.Helper()
	testenv.CheckGoroutines(t)
	addrc := make(chan []string, 1)
	onListen = func(a []string) { addrc <- a }
	t.Cleanup(func() { onListen = nil })
	ctx, cancel := context.WithCancel(context.Background())
	var logs syncBuffer
	done := make(chan int, 1)
	go func() { done <- runServe(ctx, args, io.Discard, &logs) }()
	var addr []string
	select {
	case addr = <-addrc:
	case code := <-done:
		t.Fatalf("serve exited with %d: %s", code, logs.String())
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not start")
	}
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("serve exited with %d after SIGTERM-equivalent: %s", code, logs.String())
		}
		if !strings.Contains(logs.String(), `"msg":"stopped"`) {
			t.Errorf("no structured stop log: %s", logs.String())
		}
	})
	return addr, &logs
}

func fetch(t *testing.T, c *http.Client, method, url, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestServeDefault: `simdedge` with no arguments serves the embedded
// configuration: /healthz, /echo and /demo/ through the demo upstream.
func TestServeDefault(t *testing.T) {
	addr := startServe(t)
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{}}
	defer c.CloseIdleConnections()
	base := "http://" + addr
	if code, body := fetch(t, c, "GET", base+"/healthz", ""); code != 200 || body != "ok\n" {
		t.Errorf("/healthz: %d %q", code, body)
	}
	if code, body := fetch(t, c, "POST", base+"/echo", "12345"); code != 200 || !strings.Contains(body, `"body_len":5`) {
		t.Errorf("/echo: %d %q", code, body)
	}
	if code, body := fetch(t, c, "GET", base+"/demo/x", ""); code != 200 || !strings.Contains(body, "demo upstream") ||
		!strings.Contains(body, "target: /demo/x") || !strings.Contains(body, "via: 1.1 simdedge") {
		t.Errorf("/demo/x: %d %q", code, body)
	}
	if code, _ := fetch(t, c, "GET", base+"/other", ""); code != 404 {
		t.Errorf("/other: %d, want 404", code)
	}
}

func TestServeConfigFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "c.yaml")
	os.WriteFile(file, []byte("routes:\n  - match: {path: /hi, methods: [GET]}\n    respond: {status: 201, body: hi}\n"), 0o644)
	addr := startServe(t, "-config", file)
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{}}
	defer c.CloseIdleConnections()
	if code, body := fetch(t, c, "GET", "http://"+addr+"/hi", ""); code != 201 || body != "hi" {
		t.Errorf("got %d %q", code, body)
	}
	if code, _ := fetch(t, c, "POST", "http://"+addr+"/hi", ""); code != 404 {
		t.Errorf("POST: %d, want 404 (method not in the route)", code)
	}
}

func TestServeErrors(t *testing.T) {
	l := testnet.Listen(t)
	defer l.Close()
	var stderr bytes.Buffer
	if code := runServe(context.Background(), []string{"-listen", l.Addr().String()}, io.Discard, &stderr); code != 1 ||
		!strings.Contains(stderr.String(), "already in use") {
		t.Errorf("busy port: %d %q", code, stderr.String())
	}
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("routes:\n  - match: {path_prefix: /}\n    proxy: {upstream: missing}\n"), 0o644)
	stderr.Reset()
	if code := runServe(context.Background(), []string{"-config", bad}, io.Discard, &stderr); code != 1 ||
		!strings.Contains(stderr.String(), "line 3") || !strings.Contains(stderr.String(), "routes[0].proxy.upstream") {
		t.Errorf("bad config: %d %q", code, stderr.String())
	}
}

func TestCheck(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := runCheck(nil, &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), "read_header: 10s") ||
		!strings.Contains(stdout.String(), "builtin: demo") || !strings.Contains(stdout.String(), "engine: "+config.DefaultEngine) {
		t.Errorf("check built-in: %d %q %q", code, stdout.String(), stderr.String())
	}
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("timeouts:\n  idle: soon\nroutes: [{echo: {}}]\n"), 0o644)
	stdout.Reset()
	stderr.Reset()
	if code := runCheck([]string{"-config", bad}, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), "line 2: timeouts.idle") {
		t.Errorf("check bad: %d %q", code, stderr.String())
	}
	if code := run([]string{"bogus"}, &stdout, &stderr); code != 2 {
		t.Errorf("unknown command: %d", code)
	}
	stdout.Reset()
	if code := run([]string{"version"}, &stdout, &stderr); code != 0 || !strings.HasPrefix(stdout.String(), "simdedge ") {
		t.Errorf("version: %d %q", code, stdout.String())
	}
}

// TestReloadOnSIGHUP: a SIGHUP rebuilds the routes from the file and swaps
// them in; a broken file keeps the running configuration.
func TestReloadOnSIGHUP(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "c.yaml")
	write := func(body string) {
		if err := os.WriteFile(file, []byte("routes:\n  - match: {path: /v}\n    respond: {status: 200, body: "+body+"}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("one")
	addr := startServe(t, "-config", file)
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{}}
	defer c.CloseIdleConnections()
	waitBody := func(want string) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for {
			_, body := fetch(t, c, "GET", "http://"+addr+"/v", "")
			if body == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("body %q, want %q", body, want)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitBody("one")
	write("two")
	syscall.Kill(os.Getpid(), syscall.SIGHUP)
	waitBody("two")
	os.WriteFile(file, []byte("routes: [\n"), 0o644)
	syscall.Kill(os.Getpid(), syscall.SIGHUP)
	time.Sleep(200 * time.Millisecond)
	waitBody("two")
}

// TestServeListeners: `listen` and every tcp entry of `listeners` serve the
// same routes; a listener that cannot open stops start-up and releases
// those already opened.
func TestServeListeners(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "c.yaml")
	os.WriteFile(file, []byte(`listen: "127.0.0.1:0"
listeners:
  - transport: tcp
    address: "127.0.0.1:0"
routes:
  - match: {path: /hi}
    respond: {status: 200, body: hi}
`), 0o644)
	addrs := startServeAll(t, "-config", file)
	if len(addrs) != 2 || addrs[0] == addrs[1] {
		t.Fatalf("addresses %v, want two distinct", addrs)
	}
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{}}
	defer c.CloseIdleConnections()
	for _, a := range addrs {
		if code, body := fetch(t, c, "GET", "http://"+a+"/hi", ""); code != 200 || body != "hi" {
			t.Errorf("%s: %d %q", a, code, body)
		}
	}

	// The second listener's port is taken: serve fails, and the first
	// listener's port is free again afterwards.
	busy := testnet.Listen(t)
	defer busy.Close()
	first := testnet.FreeAddr(t)
	os.WriteFile(file, []byte("listen: \""+first+"\"\nlisteners: [{transport: tcp, address: \""+busy.Addr().String()+
		"\"}]\nroutes:\n  - match: {path: /hi}\n    respond: {status: 200}\n"), 0o644)
	var stderr bytes.Buffer
	if code := runServe(context.Background(), []string{"-config", file}, io.Discard, &stderr); code != 1 ||
		!strings.Contains(stderr.String(), "cannot listen on "+busy.Addr().String()) {
		t.Fatalf("busy second listener: %d %q", code, stderr.String())
	}
	l, err := net.Listen("tcp", first)
	if err != nil {
		t.Fatalf("the first listener was not closed: %v", err)
	}
	l.Close()
}

// TestServeLoops: a tcp listener with loops: 2 opens two SO_REUSEPORT
// sockets on one address, each served by its own event loop; clients see
// one address that answers.
func TestServeLoops(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("loops need SO_REUSEPORT and epoll (Linux)")
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "c.yaml")
	os.WriteFile(file, []byte(`listeners:
  - address: "127.0.0.1:0"
    engine: loop
    loops: 2
routes:
  - match: {path: /hi}
    respond: {status: 200, body: hi}
`), 0o644)
	addrs := startServeAll(t, "-config", file)
	if len(addrs) != 1 {
		t.Fatalf("addresses %v, want one", addrs)
	}
	_, port, _ := net.SplitHostPort(addrs[0])
	if n := listeningSockets(t, port); n != 2 {
		t.Fatalf("%d sockets listen on port %s, want 2", n, port)
	}
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	for range 20 {
		if code, body := fetch(t, c, "GET", "http://"+addrs[0]+"/hi", ""); code != 200 || body != "hi" {
			t.Fatalf("%d %q", code, body)
		}
	}
}

// listeningSockets counts the IPv4 TCP sockets in LISTEN state on port
// (decimal), from /proc/net/tcp.
func listeningSockets(t *testing.T, port string) int {
	t.Helper()
	b, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		t.Fatal(err)
	}
	p, _ := strconv.Atoi(port)
	local := fmt.Sprintf(":%04X", p)
	n := 0
	for _, line := range strings.Split(string(b), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) > 3 && strings.HasSuffix(f[1], local) && f[3] == "0A" {
			n++
		}
	}
	return n
}

// TestCheckRedact: check prints the effective configuration in clear (the
// operator can read the file anyway) and, with -redact, as /config does.
func TestCheckRedact(t *testing.T) {
	file := filepath.Join(t.TempDir(), "c.yaml")
	os.WriteFile(file, []byte("routes:\n  - respond: {status: 200}\n    request_headers: {set: {X-Api-Key: k-secret}}\n"), 0o644)
	for _, tc := range []struct {
		args  []string
		clear bool
	}{{[]string{file}, true}, {[]string{"-redact", file}, false}, {[]string{file, "-redact"}, false}} {
		var stdout, stderr bytes.Buffer
		code := runCheck(tc.args, &stdout, &stderr)
		if code != 0 || strings.Contains(stdout.String(), "k-secret") != tc.clear || !strings.Contains(stdout.String(), "X-Api-Key") {
			t.Errorf("check %v: %d %q %q", tc.args, code, stdout.String(), stderr.String())
		}
	}
}
