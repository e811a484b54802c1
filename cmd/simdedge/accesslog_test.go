package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/simdedge/simdedge/internal/testnet"
)

// Bounds of the end-to-end access-log tests.
const (
	// logClients and logPerClient: the load of the rotation test (8
	// keep-alive clients, 4,000 requests per engine).
	logClients   = 8
	logPerClient = 500
	// binWait bounds starting, draining and stopping the binary.
	binWait = 60 * time.Second
)

// buildBinary builds cmd/simdedge into dir (the tests run the real
// binary, signals and all). It skips without a Go toolchain.
func buildBinary(t *testing.T) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go toolchain not found: the test builds the simdedge binary")
	}
	bin := filepath.Join(t.TempDir(), "simdedge")
	out, err := exec.Command(goBin, "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// runBinary starts `bin serve -config file [extra...]` with stdout to
// out; cleanup stops it by PID (SIGTERM, then SIGKILL after binWait).
func runBinary(t *testing.T, bin, file string, stdout io.Writer, extra ...string) (*exec.Cmd, *syncBuffer, func()) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"serve", "-config", file}, extra...)...)
	cmd.Stdout = stdout
	return startCmd(t, cmd)
}

// startCmd starts cmd (a simdedge binary) with its stderr to the returned
// buffer; cleanup and the returned function stop it as runBinary says.
func startCmd(t *testing.T, cmd *exec.Cmd) (*exec.Cmd, *syncBuffer, func()) {
	t.Helper()
	logs := &syncBuffer{}
	cmd.Stderr = logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cmd.Process.Signal(syscall.SIGTERM) // by PID: only the process this test started
			done := make(chan struct{})
			go func() { cmd.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(binWait):
				cmd.Process.Kill()
				<-done
				t.Errorf("simdedge did not stop on SIGTERM; log: %s", logs.String())
			}
		})
	}
	t.Cleanup(stop)
	return cmd, logs, stop
}

// waitServing polls url until it answers 200, and returns how many
// requests got an answer (attempts refused before the listener opened are
// not requests).
func waitServing(t *testing.T, c *http.Client, url string, logs *syncBuffer) int {
	t.Helper()
	deadline := time.Now().Add(binWait)
	answered := 0
	for {
		resp, err := c.Get(url)
		if err == nil {
			answered++
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return answered
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("simdedge not serving %s: %v; log: %s", url, err, logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func startOriginHTTP(t *testing.T) string {
	t.Helper()
	l := testnet.Listen(t)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "origin\n") })}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return l.Addr().String()
}

// TestAccessLogRotation: under load from 8 keep-alive clients, the file is
// renamed and the real binary gets SIGUSR1 mid-run; afterwards every
// request sent has exactly one line across the two files, every line is
// whole JSON, and both files got lines. On each engine and proxy path.
func TestAccessLogRotation(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	bin := buildBinary(t)
	for _, e := range []struct{ name, engine, onLoop string }{
		{"goroutine", "goroutine", "false"},
		{"loop", "loop", "false"},
		{"loop-proxy", "loop", "true"},
	} {
		t.Run(e.name, func(t *testing.T) { testAccessLogRotation(t, bin, e.engine, e.onLoop) })
	}
}

func testAccessLogRotation(t *testing.T, bin, engine, onLoop string) {
	origin := startOriginHTTP(t)
	dir := t.TempDir()
	logPath := filepath.Join(dir, "access.log")
	addr := freeAddr(t)
	file := filepath.Join(dir, "c.yaml")
	writeFile(t, file, fmt.Sprintf(`listen: %q
engine: %s
proxy_on_loop: %s
access_log: {path: %q, format: json}
request_id: {}
upstreams:
  - name: app
    targets: [%q]
routes:
  - name: static
    match: {path_prefix: /static}
    respond: {status: 200, body: "ok\n"}
  - name: api
    match: {path_prefix: /api}
    proxy: {upstream: app}
`, addr, engine, onLoop, logPath, origin))
	cmd, logs, stop := runBinary(t, bin, file, io.Discard)
	c := &http.Client{Timeout: binWait, Transport: &http.Transport{MaxIdleConnsPerHost: logClients}}
	defer c.CloseIdleConnections()
	sent := waitServing(t, c, "http://"+addr+"/static", logs)

	var done atomic.Int64
	rotated := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, logClients)
	for w := 0; w < logClients; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < logPerClient; i++ {
				path := "/static"
				if (w+i)%2 == 1 {
					path = "/api/x"
				}
				resp, err := c.Get("http://" + addr + path)
				if err != nil {
					errs <- err
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					errs <- fmt.Errorf("GET %s: %d", path, resp.StatusCode)
					return
				}
				if done.Add(1) == logClients*logPerClient/2 {
					close(rotated)
				}
			}
		}(w)
	}
	<-rotated
	// logrotate's way: rename, then tell the server to reopen.
	if err := os.Rename(logPath, logPath+".1"); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Process.Signal(syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	sent += int(done.Load())
	c.CloseIdleConnections()
	stop() // the drain closes the log, which writes what it holds
	total := 0
	for _, p := range []string{logPath + ".1", logPath} {
		n := countJSONLines(t, p)
		if n == 0 {
			t.Errorf("%s: no lines (the reopen did not happen mid-run?)", p)
		}
		total += n
	}
	if total != sent {
		t.Errorf("%d lines across both files, %d requests sent; log: %s", total, sent, logs.String())
	}
}

// countJSONLines counts p's lines, failing on any that is not whole JSON
// or that comes before the line above it in time (the file keeps time
// order: server/accesslog/writer.go).
func countJSONLines(t *testing.T, p string) int {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	n, inversions, prev := 0, 0, ""
	for sc.Scan() {
		var e map[string]any
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("%s line %d torn: %v: %q", p, n+1, err, sc.Bytes())
		}
		if e["request_id"] == "" || e["status"] != 200.0 {
			t.Fatalf("%s line %d: %s", p, n+1, sc.Bytes())
		}
		// Fixed-width UTC times compare as strings.
		if tm, _ := e["time"].(string); tm < prev {
			inversions++
		} else {
			prev = tm
		}
		n++
	}
	if inversions > 0 {
		t.Errorf("%s: %d of %d lines come before a line above them in time", p, inversions, n)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestAccessLogStalledSink: the binary's stdout is a pipe nobody reads;
// requests keep being answered (each within a bound), and the lines that
// could not be buffered are counted in simdedge_access_log_dropped_total.
func TestAccessLogStalledSink(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	bin := buildBinary(t)
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close() // never read: the pipe fills and the writer stalls
	dir := t.TempDir()
	addr, adminAddr := freeAddr(t), freeAddr(t)
	file := filepath.Join(dir, "c.yaml")
	writeFile(t, file, fmt.Sprintf(`listen: %q
admin: {address: %q}
access_log: {path: stdout}
routes:
  - match: {path_prefix: /}
    respond: {status: 200, body: "ok\n"}
`, addr, adminAddr))
	_, logs, stop := runBinary(t, bin, file, pw)
	pw.Close() // the child holds its own copy
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{}}
	defer c.CloseIdleConnections()
	waitServing(t, c, "http://"+addr+"/", logs)
	dropped := func() float64 {
		resp, err := c.Get("http://" + adminAddr + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		m := regexp.MustCompile(`(?m)^simdedge_access_log_dropped_total (\S+)$`).FindSubmatch(b)
		if m == nil {
			t.Fatalf("no simdedge_access_log_dropped_total in /metrics")
		}
		v, _ := strconv.ParseFloat(string(m[1]), 64)
		return v
	}
	// Far more lines than the pipe (64 KiB) and the buffers (a few MiB)
	// hold; each request must be answered within the client's timeout.
	const maxRequests = 100000
	deadline := time.Now().Add(2 * binWait)
	for i := 0; ; i++ {
		resp, err := c.Get("http://" + addr + "/")
		if err != nil {
			t.Fatalf("request %d blocked or failed with the sink stalled: %v", i, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if i%1000 == 999 && dropped() > 0 {
			break
		}
		if i >= maxRequests || time.Now().After(deadline) {
			t.Fatalf("no drop counted after %d requests", i+1)
		}
	}
	// Stopping must not hang on the stalled sink either (Close gives up
	// after its bound).
	stop()
}
