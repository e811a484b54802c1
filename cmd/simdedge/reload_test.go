package main

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/simdedge/simdedge/internal/testnet"
)

// freeAddr returns a loopback address with a port that was free a moment
// ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	return testnet.FreeAddr(t)
}

// hup sends SIGHUP to this process (runServe's reload) and waits until the
// log shows one more reload outcome than before.
func hup(t *testing.T, logs *syncBuffer) {
	t.Helper()
	outcomes := func() int {
		s := logs.String()
		return strings.Count(s, `"msg":"reloaded"`) + strings.Count(s, `"msg":"reload failed`)
	}
	before := outcomes()
	syscall.Kill(os.Getpid(), syscall.SIGHUP)
	for deadline := time.Now().Add(10 * time.Second); outcomes() == before; {
		if time.Now().After(deadline) {
			t.Fatalf("no reload outcome logged: %s", logs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func writeFile(t *testing.T, file, body string) {
	t.Helper()
	if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func routeV(body string) string {
	return "routes:\n  - match: {path: /v}\n    respond: {status: 200, body: " + body + "}\n"
}

// TestReloadMovesListener: a reload that changes `listen` opens the new
// address before it stops the old one; a keep-alive client busy on the old
// address during the reload sees no failed request (its connection is
// served on, with the new routes), the new address answers, and the old
// one takes no new connections. Before, the reload logged "reloaded" and
// kept listening where it was.
func TestReloadMovesListener(t *testing.T) {
	for _, engine := range []string{"loop", "goroutine"} {
		t.Run(engine, func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, "c.yaml")
			oldAddr, newAddr := freeAddr(t), freeAddr(t)
			writeFile(t, file, "engine: "+engine+"\nlisten: \""+oldAddr+"\"\n"+routeV("one"))
			addrs, logs := startServeLogs(t, "-config", file)
			if addrs[0] != oldAddr {
				t.Fatalf("listening on %v, want %s", addrs, oldAddr)
			}

			var (
				mu              sync.Mutex
				fails, ok       int
				sawTwo          bool
				stop            = make(chan struct{})
				done            = make(chan struct{})
				firstErr        error
				keepAliveClient = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
			)
			defer keepAliveClient.CloseIdleConnections()
			go func() {
				defer close(done)
				for i := 0; i < 100000; i++ {
					select {
					case <-stop:
						return
					default:
					}
					resp, err := keepAliveClient.Get("http://" + oldAddr + "/v")
					mu.Lock()
					if err != nil {
						fails++
						if firstErr == nil {
							firstErr = err
						}
						mu.Unlock()
						continue
					}
					b, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					ok++
					sawTwo = sawTwo || string(b) == "two"
					mu.Unlock()
				}
			}()
			time.Sleep(100 * time.Millisecond)
			writeFile(t, file, "engine: "+engine+"\nlisten: \""+newAddr+"\"\n"+routeV("two"))
			hup(t, logs)
			if !strings.Contains(logs.String(), `"msg":"reloaded"`) {
				t.Fatalf("reload not applied: %s", logs.String())
			}
			c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
			if code, body := fetch(t, c, "GET", "http://"+newAddr+"/v", ""); code != 200 || body != "two" {
				t.Fatalf("new address: %d %q", code, body)
			}
			for deadline := time.Now().Add(5 * time.Second); ; {
				mu.Lock()
				seen := sawTwo
				mu.Unlock()
				if seen {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the client on the old address never got the new routes")
				}
				time.Sleep(10 * time.Millisecond)
			}
			close(stop)
			<-done
			if fails != 0 || ok == 0 {
				t.Fatalf("%d requests failed (first: %v), %d succeeded", fails, firstErr, ok)
			}
			keepAliveClient.CloseIdleConnections()
			if conn, err := net.DialTimeout("tcp", oldAddr, time.Second); err == nil {
				conn.Close()
				t.Fatalf("the old address %s still accepts connections", oldAddr)
			}
		})
	}
}

// TestReloadLimits: new limits apply to connections accepted after the
// reload; a connection accepted before keeps the limits it started with.
func TestReloadLimits(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "c.yaml")
	writeFile(t, file, "limits: {max_header_bytes: 65536}\n"+routeV("ok"))
	addrs, logs := startServeLogs(t, "-config", file, "-listen", "127.0.0.1:0")
	req := "GET /v HTTP/1.1\r\nHost: x\r\nX-Pad: " + strings.Repeat("p", 10000) + "\r\n\r\n"
	status := func(c net.Conn, br *bufio.Reader) int {
		t.Helper()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := io.WriteString(c, req); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	before, err := net.Dial("tcp", addrs[0])
	if err != nil {
		t.Fatal(err)
	}
	defer before.Close()
	bbr := bufio.NewReader(before)
	if code := status(before, bbr); code != 200 {
		t.Fatalf("before the reload: %d", code)
	}
	writeFile(t, file, "limits: {max_header_bytes: 4096}\n"+routeV("ok"))
	hup(t, logs)
	after, err := net.Dial("tcp", addrs[0])
	if err != nil {
		t.Fatal(err)
	}
	defer after.Close()
	if code := status(after, bufio.NewReader(after)); code != 431 {
		t.Fatalf("a new connection after lowering max_header_bytes: %d, want 431", code)
	}
	if code := status(before, bbr); code != 200 {
		t.Fatalf("the connection from before the reload: %d, want 200 (its limits)", code)
	}
}

// TestReloadRefusesUnreloadable: a change that cannot be applied to a
// running server refuses the whole reload, names the key, and leaves the
// running configuration serving (the routes changed in the same file are
// not applied either).
func TestReloadRefusesUnreloadable(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "c.yaml")
	addr := freeAddr(t)
	writeFile(t, file, "engine: loop\nlisten: \""+addr+"\"\n"+routeV("one"))
	_, logs := startServeLogs(t, "-config", file)
	writeFile(t, file, "engine: goroutine\nlisten: \""+addr+"\"\n"+routeV("two"))
	hup(t, logs)
	if !strings.Contains(logs.String(), "reload failed") || !strings.Contains(logs.String(), "engine: cannot be changed by a reload") {
		t.Fatalf("no refusal naming the key: %s", logs.String())
	}
	if strings.Contains(logs.String(), `"msg":"reloaded"`) {
		t.Fatalf("an unapplied reload logged as reloaded: %s", logs.String())
	}
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	if code, body := fetch(t, c, "GET", "http://"+addr+"/v", ""); code != 200 || body != "one" {
		t.Fatalf("after the refused reload: %d %q, want the running configuration's", code, body)
	}
}

// TestReloadKeepsUpstreamHealth: SIGHUP keeps the health state of the
// targets that stay in an upstream of the same name: a target ejected
// before the reload (it answered 500 once, consecutive_failures 1) gets no
// request after it, though a target was added. Before, a reload built new
// pools and sent requests to it again.
func TestReloadKeepsUpstreamHealth(t *testing.T) {
	var badHits sync.Mutex
	bad := 0
	origin := func(status int, count bool) string {
		l := testnet.Listen(t)
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if count {
				badHits.Lock()
				bad++
				badHits.Unlock()
			}
			w.WriteHeader(status)
		})}
		go srv.Serve(l)
		t.Cleanup(func() { srv.Close() })
		return l.Addr().String()
	}
	a, b, c := origin(500, true), origin(200, false), origin(200, false)
	conf := func(targets ...string) string {
		return "upstreams:\n  - name: api\n    targets: [\"" + strings.Join(targets, `", "`) + "\"]\n" +
			"    health: {passive: {consecutive_failures: 1, eject_for: 1m}}\n" +
			"routes:\n  - match: {path_prefix: /}\n    proxy: {upstream: api}\n"
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "c.yaml")
	writeFile(t, file, conf(a, b))
	addrs, logs := startServeLogs(t, "-config", file, "-listen", "127.0.0.1:0")
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	get := func() int {
		t.Helper()
		resp, err := client.Get("http://" + addrs[0] + "/")
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	for range 4 { // round robin: the 500 target is tried and ejected
		get()
	}
	badHits.Lock()
	before := bad
	badHits.Unlock()
	if before != 1 {
		t.Fatalf("the failing target answered %d requests before the reload, want 1", before)
	}
	writeFile(t, file, conf(a, b, c))
	hup(t, logs)
	if !strings.Contains(logs.String(), `"msg":"reloaded"`) {
		t.Fatalf("reload failed: %s", logs.String())
	}
	for i := range 12 {
		if s := get(); s != 200 {
			t.Fatalf("request %d after the reload: %d, want 200 (the ejected target stays out)", i, s)
		}
	}
	badHits.Lock()
	defer badHits.Unlock()
	if bad != before {
		t.Errorf("the ejected target got %d requests after the reload", bad-before)
	}
}
