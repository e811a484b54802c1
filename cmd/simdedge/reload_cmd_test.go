package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestReloadCommand runs the real binary: `serve -pidfile` and `simdedge
// reload`, on both engines. An applied reload exits 0 and serves the new
// routes; a refused one (a change that needs a restart) exits 1 with the
// reason and changes nothing; an invalid file is refused before any
// signal; POST /reload answers the same outcomes; the reload metrics
// follow; a second server cannot take a live pidfile; and after the
// server dies, reload finds the pidfile stale and signals nobody. Before,
// a reload was a bare SIGHUP with no outcome but a log line.
func TestReloadCommand(t *testing.T) {
	bin := buildBinary(t)
	for _, engine := range []string{"loop", "goroutine"} {
		t.Run(engine, func(t *testing.T) { testReloadCommand(t, bin, engine) })
	}
}

func testReloadCommand(t *testing.T, bin, engine string) {
	dir := t.TempDir()
	file, pidfile := filepath.Join(dir, "c.yaml"), filepath.Join(dir, "run", "simdedge.pid")
	if err := os.Mkdir(filepath.Dir(pidfile), 0o755); err != nil {
		t.Fatal(err)
	}
	addr, adminAddr := freeAddr(t), freeAddr(t)
	conf := func(engine, body string) string {
		return "engine: " + engine + "\nlisten: \"" + addr + "\"\nadmin: {address: \"" + adminAddr + "\"}\n" + routeV(body)
	}
	writeFile(t, file, conf(engine, "one"))
	cmd, logs, _ := runBinary(t, bin, file, io.Discard, "-pidfile", pidfile)
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	waitServing(t, c, "http://"+addr+"/v", logs)

	reload := func(args ...string) (int, string, string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), binWait)
		defer cancel()
		var stdout, stderr bytes.Buffer
		r := exec.CommandContext(ctx, bin, append([]string{"reload", "-pidfile", pidfile, "-timeout", "30s"}, args...)...)
		r.Stdout, r.Stderr = &stdout, &stderr
		err := r.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return code, stdout.String(), stderr.String()
	}
	body := func() string {
		t.Helper()
		_, b := fetch(t, c, "GET", "http://"+addr+"/v", "")
		return b
	}
	lastReload := func() string {
		t.Helper()
		_, m := fetch(t, c, "GET", "http://"+adminAddr+"/metrics", "")
		return regexp.MustCompile(`(?m)^simdedge_config_last_reload_success (\d)$`).FindString(m)
	}
	generation := func() string {
		t.Helper()
		b, err := os.ReadFile(pidfile + ".status")
		if err != nil {
			t.Fatal(err)
		}
		return regexp.MustCompile(`"generation":\d+`).FindString(string(b))
	}
	if m := lastReload(); m != "simdedge_config_last_reload_success 1" {
		t.Errorf("after start: %q", m)
	}

	// Applied, with the file the server was started with by default.
	writeFile(t, file, conf(engine, "two"))
	if code, stdout, stderr := reload(); code != 0 || !strings.Contains(stdout, file+" applied (1 listener, 1 route, 0 upstreams)") {
		t.Fatalf("applied reload: %d %q %q; log %s", code, stdout, stderr, logs.String())
	}
	if b := body(); b != "two" {
		t.Errorf("after the applied reload: %q", b)
	}

	// Refused by the server: the engine of a listener that stays.
	other := map[string]string{"loop": "goroutine", "goroutine": "loop"}[engine]
	writeFile(t, file, conf(other, "three"))
	if code, stdout, stderr := reload("-config", file); code != 1 || stdout != "" ||
		!strings.Contains(stderr, "refused") || !strings.Contains(stderr, "engine") || !strings.Contains(stderr, "cannot be changed by a reload") {
		t.Errorf("refused reload: %d %q %q", code, stdout, stderr)
	}
	if b, m := body(), lastReload(); b != "two" || m != "simdedge_config_last_reload_success 0" {
		t.Errorf("after the refused reload: %q, %q", b, m)
	}
	if g := generation(); g != `"generation":2` {
		t.Errorf("status after two reloads: %s", g)
	}

	// Refused before any signal: the file does not parse.
	writeFile(t, file, "routes: [\n")
	if code, _, stderr := reload(); code != 1 || !strings.Contains(stderr, "line") || !strings.Contains(stderr, "was not signalled") {
		t.Errorf("invalid file: %d %q", code, stderr)
	}
	if g := generation(); g != `"generation":2` {
		t.Errorf("an invalid file reached the server: %s", g)
	}

	// Another file than the server's.
	if code, _, stderr := reload("-config", filepath.Join(dir, "elsewhere.yaml")); code != 1 || !strings.Contains(stderr, "was started with") {
		t.Errorf("other file: %d %q", code, stderr)
	}

	// The admin API: the same reload and outcomes over HTTP.
	writeFile(t, file, conf(engine, "four"))
	if code, b := fetch(t, c, "POST", "http://"+adminAddr+"/reload", ""); code != 200 || !strings.HasPrefix(b, "reloaded: 1 listener") {
		t.Errorf("POST /reload: %d %q", code, b)
	}
	if b, m := body(), lastReload(); b != "four" || m != "simdedge_config_last_reload_success 1" {
		t.Errorf("after POST /reload: %q, %q", b, m)
	}
	writeFile(t, file, conf(other, "five"))
	if code, b := fetch(t, c, "POST", "http://"+adminAddr+"/reload", ""); code != 422 || !strings.Contains(b, "engine") {
		t.Errorf("refused POST /reload: %d %q", code, b)
	}

	// A second server cannot take the live pidfile.
	var stderr bytes.Buffer
	second := exec.Command(bin, "serve", "-listen", "127.0.0.1:0", "-pidfile", pidfile)
	second.Stderr = &stderr
	if err := second.Run(); err == nil || !strings.Contains(stderr.String(), "another simdedge holds") {
		t.Errorf("second server on the pidfile: %v %q", err, stderr.String())
	}

	// A dead server's pidfile is stale: nobody is signalled.
	cmd.Process.Kill() // by PID: only the process this test started
	cmd.Wait()
	if _, err := os.Stat(pidfile); err != nil {
		t.Fatalf("a killed server's pidfile should remain: %v", err)
	}
	if code, _, stderr := reload(); code != 1 || !strings.Contains(stderr, "stale") {
		t.Errorf("stale pidfile: %d %q", code, stderr)
	}
}

// TestServePIDFileRemoved: serve -pidfile writes the process ID and
// removes the pidfile and its status file when it stops.
func TestServePIDFileRemoved(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "s.pid")
	started := make(chan []string, 1)
	onListen = func(a []string) { started <- a }
	defer func() { onListen = nil }()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var logs syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- runServe(ctx, []string{"-listen", "127.0.0.1:0", "-pidfile", pidfile}, io.Discard, &logs)
	}()
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatalf("serve did not start: %s", logs.String())
	}
	b, err := os.ReadFile(pidfile)
	if err != nil || string(b) != strconv.Itoa(os.Getpid())+"\n" {
		t.Errorf("pidfile: %q %v, want this process's ID", b, err)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("serve exited with %d: %s", code, logs.String())
	}
	for _, f := range []string{pidfile, pidfile + ".status"} {
		if _, err := os.Stat(f); !os.IsNotExist(err) {
			t.Errorf("%s remains after the stop: %v", filepath.Base(f), err)
		}
	}
}

// TestAdminReloadInProcess: POST /reload goes through the serve loop (the
// reloader hands it over), in-process so the race detector sees the
// hand-over; an applied and a refused reload, and the status file
// numbering both.
func TestAdminReloadInProcess(t *testing.T) {
	dir := t.TempDir()
	file, pidfile := filepath.Join(dir, "c.yaml"), filepath.Join(dir, "s.pid")
	adminAddr := freeAddr(t)
	conf := func(extra, body string) string {
		return extra + "admin: {address: \"" + adminAddr + "\"}\n" + routeV(body)
	}
	writeFile(t, file, conf("", "one"))
	addrs, _ := startServeLogs(t, "-config", file, "-listen", "127.0.0.1:0", "-pidfile", pidfile)
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	writeFile(t, file, conf("", "two"))
	if code, b := fetch(t, c, "POST", "http://"+adminAddr+"/reload", ""); code != 200 || !strings.HasPrefix(b, "reloaded: 1 listener, 1 route") {
		t.Errorf("applied: %d %q", code, b)
	}
	if _, b := fetch(t, c, "GET", "http://"+addrs[0]+"/v", ""); b != "two" {
		t.Errorf("after the reload: %q", b)
	}
	writeFile(t, file, conf("proxy_on_loop: false\n", "three"))
	if code, b := fetch(t, c, "POST", "http://"+adminAddr+"/reload", ""); code != 422 || !strings.Contains(b, "proxy_on_loop") {
		t.Errorf("refused: %d %q", code, b)
	}
	st, err := readStatus(pidfile)
	if err != nil || st.Generation != 2 || st.Applied || !strings.Contains(st.Error, "proxy_on_loop") || st.Summary != "1 listener, 1 route, 0 upstreams" {
		t.Errorf("status %+v %v", st, err)
	}
}
