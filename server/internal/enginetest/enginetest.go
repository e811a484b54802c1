// Package enginetest runs a package's tests once per kernel-TCP engine of
// package server (the goroutine engine and, on Linux, the event loop), so
// that every end-to-end test holds on both without copies of the tests.
//
// A package calls Main from its TestMain and serves its test listeners
// with server.Server.ServeTCP(l, server.Engine(current)); MainProxy adds a
// run on the loop with its own proxy on ("loop-proxy"). The environment
// variable SIMDEDGE_TEST_ENGINES ("goroutine", "loop", "loop-proxy",
// comma-separated) narrows the runs. The loop runs route every loop read
// and write through io_uring (SIMDEDGE_IO_URING=all, unless set).
package enginetest

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
)

// Engine names, as server.Engine spells them (this package cannot import
// server: server's own tests use it).
const (
	Goroutine = "goroutine"
	Loop      = "loop"
	// LoopProxy is the loop engine with server.Options.LoopProxy on: a
	// run that packages with a proxy ask for (MainProxy).
	LoopProxy = "loop-proxy"
)

// Engines returns the engines to run the tests on.
func Engines() []string { return engines(false) }

func engines(proxy bool) []string {
	all := []string{Goroutine}
	if runtime.GOOS == "linux" {
		all = append(all, Loop)
		if proxy {
			all = append(all, LoopProxy)
		}
	}
	v := os.Getenv("SIMDEDGE_TEST_ENGINES")
	if v == "" {
		return all
	}
	var out []string
	for _, e := range strings.Split(v, ",") {
		for _, a := range all {
			if strings.TrimSpace(e) == a {
				out = append(out, a)
			}
		}
	}
	return out
}

// Main runs m once per engine, calling set before each run, and exits with
// the first failing run's code.
func Main(m *testing.M, set func(engine string)) { run(m, engines(false), set) }

// MainProxy is Main with a third run, LoopProxy, for packages whose tests
// proxy (the loop serves proxied requests itself in that run).
func MainProxy(m *testing.M, set func(engine string)) { run(m, engines(true), set) }

// ringEnv is server's switch for the loop's io_uring batching; unless the
// environment sets it, the loop runs set "all" so that every loop read and
// write goes through the ring (by default only batches of two or more do,
// which single-client tests rarely make).
const ringEnv = "SIMDEDGE_IO_URING"

func run(m *testing.M, runs []string, set func(engine string)) {
	code := 0
	_, ringSet := os.LookupEnv(ringEnv)
	for _, e := range runs {
		set(e)
		if !ringSet && e != Goroutine {
			os.Setenv(ringEnv, "all")
		}
		fmt.Fprintf(os.Stderr, "--- tests on the %s engine\n", e)
		if code = m.Run(); code != 0 {
			fmt.Fprintf(os.Stderr, "--- FAIL on the %s engine\n", e)
			break
		}
	}
	os.Exit(code)
}
