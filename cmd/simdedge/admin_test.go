package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/simdedge/simdedge/internal/testnet"
	"github.com/simdedge/simdedge/server/config"
)

func TestAdminUnreloadable(t *testing.T) {
	parse := func(admin string) *config.Config {
		c, err := config.Parse([]byte(admin + "routes:\n  - match: {path: /}\n    respond: {status: 200}\n"))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	on := parse("admin: {address: \"127.0.0.1:9901\"}\n")
	if err := checkReloadable(on, parse("admin: {address: \"127.0.0.1:9901\", pprof: false}\n")); err != nil {
		t.Errorf("same admin refused: %v", err)
	}
	for in, key := range map[string]string{
		"":                                       "admin.address",
		"admin: {address: \"127.0.0.1:9902\"}\n": "admin.address",
		"admin: {address: \"127.0.0.1:9901\", pprof: true}\n": "admin.pprof",
	} {
		err := checkReloadable(on, parse(in))
		if err == nil || !strings.HasPrefix(err.Error(), key+": cannot be changed by a reload") {
			t.Errorf("%q: err %v, want refusal of %s", in, err, key)
		}
	}
}

// TestReadyDuringDrain: from SIGTERM (the context's cancel) on, /ready
// answers 503 while a request still drains; before it, 200.
func TestReadyDuringDrain(t *testing.T) {
	arrived, release := make(chan struct{}, 1), make(chan struct{})
	l := testnet.Listen(t)
	origin := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		select {
		case <-release:
		case <-time.After(testDrainBound):
		}
		io.WriteString(w, "late\n")
	})}
	go origin.Serve(l)
	defer origin.Close()
	adminAddr := freeAddr(t)
	file := filepath.Join(t.TempDir(), "c.yaml")
	writeFile(t, file, fmt.Sprintf("admin: {address: %q}\nupstreams:\n  - name: slow\n    targets: [%q]\nroutes:\n  - match: {path_prefix: /}\n    proxy: {upstream: slow}\n", adminAddr, l.Addr().String()))

	addrc := make(chan []string, 1)
	onListen = func(a []string) { addrc <- a }
	defer func() { onListen = nil }()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var logs syncBuffer
	done := make(chan int, 1)
	go func() { done <- runServe(ctx, []string{"-config", file, "-listen", "127.0.0.1:0"}, io.Discard, &logs) }()
	var addrs []string
	select {
	case addrs = <-addrc:
	case <-time.After(testDrainBound):
		t.Fatalf("serve did not start: %s", logs.String())
	}
	client := &http.Client{Timeout: testDrainBound, Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	ready := func() int {
		resp, err := client.Get("http://" + adminAddr + "/ready")
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := ready(); code != 200 {
		t.Fatalf("/ready = %d before SIGTERM", code)
	}
	slow := make(chan error, 1)
	go func() {
		resp, err := client.Get("http://" + addrs[0] + "/x")
		if err == nil {
			resp.Body.Close()
		}
		slow <- err
	}()
	select {
	case <-arrived:
	case <-time.After(testDrainBound):
		t.Fatal("the slow request did not reach the origin")
	}
	cancel()
	deadline := time.Now().Add(testDrainBound)
	for ready() != 503 {
		if time.Now().After(deadline) {
			t.Fatalf("/ready never turned 503 while draining: %s", logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	close(release)
	if err := <-slow; err != nil {
		t.Errorf("the draining request failed: %v", err)
	}
	if code := <-done; code != 0 {
		t.Errorf("serve exited with %d: %s", code, logs.String())
	}
}

// testDrainBound bounds each wait of TestReadyDuringDrain.
const testDrainBound = 10 * time.Second
