package testenv

import (
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"
)

// Names of the variables .ci/run sets where a capability must exist.
const (
	RequireRoot  = "REQUIRE_ROOT"
	RequireNetNS = "REQUIRE_NETNS"
	RequireXDP   = "REQUIRE_XDP"
	RequireRDMA  = "REQUIRE_RDMA"
)

// Required reports whether env (one of the Require names) is set to a
// non-empty value other than "0".
func Required(env string) bool {
	v := os.Getenv(env)
	return v != "" && v != "0"
}

// Need skips tb with reason when ok is false, or fails it when env is
// Required.
func Need(tb testing.TB, env string, ok bool, reason string) {
	tb.Helper()
	if ok {
		return
	}
	if Required(env) {
		tb.Fatalf("%s is set but the capability is missing: %s", env, reason)
	}
	tb.Skip("skipped: " + reason)
}

// NeedRoot skips (or fails under REQUIRE_ROOT) unless running as root.
func NeedRoot(tb testing.TB) {
	tb.Helper()
	Need(tb, RequireRoot, os.Geteuid() == 0, "needs root")
}

// Command returns the path of an external command the test runs (curl,
// installed by `make deps`). It skips when the command is missing, and
// fails on the CI machine (REQUIRE_ROOT set), where `make deps` has
// installed it.
func Command(tb testing.TB, name string) string {
	tb.Helper()
	p, err := exec.LookPath(name)
	Need(tb, RequireRoot, err == nil, name+" not found in PATH (make deps installs it)")
	return p
}

// leakWait bounds how long CheckGoroutines waits for goroutines of the
// test to end (connection goroutines end a moment after their sockets
// close).
const leakWait = 5 * time.Second

// CheckGoroutines records the number of goroutines now and, at cleanup,
// fails the test if more remain after a grace period, listing the stacks of
// the extra ones. Register it before anything that starts goroutines, so
// that it runs after their cleanups (cleanups run last-in first-out).
func CheckGoroutines(tb testing.TB) {
	tb.Helper()
	before := len(goroutines())
	tb.Cleanup(func() {
		deadline := time.Now().Add(leakWait)
		for {
			gs := goroutines()
			if len(gs) <= before {
				return
			}
			if time.Now().After(deadline) {
				tb.Errorf("goroutine leak: %d before, %d after\n%s", before, len(gs), strings.Join(gs, "\n\n"))
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
}

// processWide are goroutines the runtime starts once per process and
// keeps (signal delivery after the first signal.Notify): not leaks.
var processWide = []string{"os/signal.signal_recv", "os/signal.loop"}

// goroutines returns the stacks of the live goroutines, minus the
// process-wide ones.
func goroutines() []string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var keep []string
next:
	for _, g := range strings.Split(string(buf), "\n\n") {
		for _, p := range processWide {
			if strings.Contains(g, p) {
				continue next
			}
		}
		keep = append(keep, g)
	}
	return keep
}

// NeedRDMA skips (or fails under REQUIRE_RDMA) when probe, the error of
// opening the libfabric provider the test needs, is not nil. The rdma
// package's tests pass the result of rdma.OpenFabric, so the reason names
// what libfabric said (testenv cannot import rdma).
func NeedRDMA(tb testing.TB, probe error) {
	tb.Helper()
	reason := "libfabric provider available"
	if probe != nil {
		reason = "needs libfabric (apt-get install libfabric-dev): " + probe.Error()
	}
	Need(tb, RequireRDMA, probe == nil, reason)
}

// OpenFDs counts the process's open descriptors (/proc/self/fd), for tests
// that check a run leaves none behind. It skips the test where /proc is
// missing (not Linux).
func OpenFDs(t testing.TB) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("cannot count descriptors: %v", err)
	}
	return len(ents)
}
