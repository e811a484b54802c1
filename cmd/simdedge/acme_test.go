package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/simdedge/simdedge/internal/testenv"
	"github.com/simdedge/simdedge/internal/testnet"
)

// acmeConfig is a TLS listener under ACME whose directory nobody answers
// (port 1 on loopback): the manager starts, and its attempts fail fast.
func acmeConfig(addr, storage, domain string) string {
	return fmt.Sprintf("listeners:\n  - address: %q\n    tls: {acme: {email: ops@example.com, directory: \"https://127.0.0.1:1/dir\", domains: [%s], storage: %q}}\n%s",
		addr, domain, storage, routeV("one"))
}

// TestCheckACME: `simdedge check` refuses a storage that cannot be
// written or created, and prints the acme defaults otherwise.
func TestCheckACME(t *testing.T) {
	dir := t.TempDir()
	notDir := filepath.Join(dir, "file")
	writeFile(t, notDir, "x")
	file := filepath.Join(dir, "c.yaml")
	for _, tc := range []struct {
		storage string
		code    int
		stderr  string
	}{
		{filepath.Join(dir, "acme"), 0, ""},
		{filepath.Join(notDir, "acme"), 1, "storage is not a writable directory"},
	} {
		writeFile(t, file, acmeConfig("127.0.0.1:0", tc.storage, "a.example"))
		var stdout, stderr bytes.Buffer
		code := runCheck([]string{"-config", file}, &stdout, &stderr)
		if code != tc.code || !strings.Contains(stderr.String(), tc.stderr) {
			t.Errorf("%s: %d %q", tc.storage, code, stderr.String())
		}
		if code == 0 && !strings.Contains(stdout.String(), "challenges: [tls-alpn-01, http-01]") {
			t.Errorf("effective config without the acme defaults:\n%s", stdout.String())
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "acme")); err == nil {
		t.Error("check created the storage directory")
	}
}

// TestReloadRefusesACMEChange: the manager of a listener that stays is
// not restarted by a reload, so a changed acme block is refused by name
// and the running configuration stays. (The test lasts about 5 s: see
// waitACMELocks.)
func TestReloadRefusesACMEChange(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "c.yaml")
	addr := freeAddr(t)
	storage := filepath.Join(dir, "acme")
	writeFile(t, file, acmeConfig(addr, storage, "a.example"))
	logs := startServeACME(t, "-config", file)
	writeFile(t, file, acmeConfig(addr, storage, "b.example"))
	hup(t, logs)
	if !strings.Contains(logs.String(), "reload failed") || !strings.Contains(logs.String(), "tls.acme cannot change") {
		t.Fatalf("no refusal naming tls.acme: %s", logs.String())
	}
	// certmagic's own lines (its first obtain attempt) go to the server's
	// JSON log.
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(logs.String(), `"msg":"acme: `); {
		if time.Now().After(deadline) {
			t.Fatalf("no certmagic line in the server's log: %s", logs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// lockWait bounds waitACMELocks: certmagic's lock goroutine notices the
// unlock at its next 5 s tick.
const lockWait = 15 * time.Second

// startServeACME is startServeLogs for configurations with tls.acme: after
// the server stops, it waits for certmagic's lock goroutines before the
// goroutine check. An obtain holds its FileStorage lock through its
// retries (here: the directory is a refused port) and releases it when
// the manager stops; the goroutine that keeps the lock file fresh ends at
// its next tick, up to 5 s later, which is as long as the check waits.
func startServeACME(t *testing.T, args ...string) *syncBuffer {
	t.Helper()
	testenv.CheckGoroutines(t)
	addrc := make(chan []string, 1)
	onListen = func(a []string) { addrc <- a }
	t.Cleanup(func() { onListen = nil })
	ctx, cancel := context.WithCancel(context.Background())
	var logs syncBuffer
	done := make(chan int, 1)
	go func() { done <- runServe(ctx, args, io.Discard, &logs) }()
	select {
	case <-addrc:
	case code := <-done:
		t.Fatalf("serve exited with %d: %s", code, logs.String())
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not start")
	}
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("serve exited with %d: %s", code, logs.String())
		}
		waitACMELocks(t)
	})
	return &logs
}

// waitACMELocks waits until no certmagic goroutine is left: not only the
// lock goroutines, but the obtain that may still be taking its lock when
// the manager stops (it then creates the lock file, and so a lock
// goroutine, after a check that looked only for those had passed: a CI
// dry run under load saw exactly that).
func waitACMELocks(t *testing.T) {
	t.Helper()
	buf := make([]byte, 1<<20)
	for deadline := time.Now().Add(lockWait); ; {
		n := runtime.Stack(buf, true)
		if !strings.Contains(string(buf[:n]), "github.com/caddyserver/certmagic.") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("certmagic's lock goroutines still running after %v", lockWait)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestReloadACMEListenerFails: a reload that adds an ACME listener and
// then fails to open another one stops the manager it started (the
// goroutine check of startServeLogs finds certmagic's maintenance
// goroutine otherwise); a later reload that adds it alone serves it.
func TestReloadACMEListenerFails(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "c.yaml")
	plain, tlsAddr := freeAddr(t), freeAddr(t)
	busy := testnet.Listen(t)
	defer busy.Close()
	writeFile(t, file, "listen: \""+plain+"\"\n"+routeV("one"))
	logs := startServeACME(t, "-config", file)
	acme := fmt.Sprintf("  - address: %q\n    tls: {acme: {directory: \"https://127.0.0.1:1/dir\", domains: [a.example], storage: %q}}\n",
		tlsAddr, filepath.Join(dir, "acme"))
	writeFile(t, file, "listen: \""+plain+"\"\nlisteners:\n"+acme+"  - address: \""+busy.Addr().String()+"\"\n"+routeV("two"))
	hup(t, logs)
	if !strings.Contains(logs.String(), "reload failed") {
		t.Fatalf("reload onto a busy address did not fail: %s", logs.String())
	}
	writeFile(t, file, "listen: \""+plain+"\"\nlisteners:\n"+acme+routeV("two"))
	hup(t, logs)
	if !strings.Contains(logs.String(), `"msg":"reloaded"`) {
		t.Fatalf("reload adding the acme listener: %s", logs.String())
	}
	c, err := net.DialTimeout("tcp", tlsAddr, 10*time.Second)
	if err != nil {
		t.Fatalf("acme listener not open after the reload: %v", err)
	}
	c.Close()
}
