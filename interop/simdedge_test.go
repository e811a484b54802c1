package interop

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/simdedge/simdedge/internal/testnet"
	"github.com/simdedge/simdedge/internal/testproc"
)

// Bounds, generous for a busy 2-CPU machine.
const (
	// startWait bounds waiting for simdedge to accept connections.
	startWait = 20 * time.Second
	// stopWait bounds simdedge's drain after SIGTERM before it is killed.
	stopWait = 20 * time.Second
)

// simdedgeBin is the binary built once for the package (TestMain).
var simdedgeBin string

// buildErr says why simdedgeBin is empty.
var buildErr string

// binDir holds the binaries the tests build; TestMain removes it.
var binDir string

func TestMain(m *testing.M) { os.Exit(runMain(m)) }

func runMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "simdedge-interop-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	binDir = dir
	bin := filepath.Join(dir, "simdedge")
	// Built in the root module (the parent directory): the binary users
	// run, with none of this module's test-only dependencies.
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/simdedge")
	cmd.Dir = ".."
	if out, err := cmd.CombinedOutput(); err == nil {
		simdedgeBin = bin
	} else {
		buildErr = fmt.Sprintf("building simdedge: %v\n%s", err, out)
	}
	return m.Run()
}

// needBinary fails when simdedge could not be built: the parent module is
// right here, so that is a broken build, not a missing tool.
func needBinary(t testing.TB) {
	t.Helper()
	if simdedgeBin == "" {
		t.Fatal(buildErr)
	}
}

// freePort returns a loopback port that was free a moment ago.
func freePort(t testing.TB) int {
	t.Helper()
	ln := testnet.Listen(t)
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// startSimdedge writes conf to a file, runs the binary with it and waits
// until addr accepts connections. The returned stop (also a cleanup) sends
// SIGTERM to that process, by its PID, and waits for it.
func startSimdedge(t testing.TB, conf, addr string) (stop func()) {
	t.Helper()
	needBinary(t)
	return startSimdedgeBin(t, simdedgeBin, conf, addr)
}

// startSimdedgeBin is startSimdedge with another build of the binary.
func startSimdedgeBin(t testing.TB, bin, conf, addr string) (stop func()) {
	t.Helper()
	stop, _ = startSimdedgeOut(t, bin, conf, addr)
	return stop
}

// startSimdedgeOut is startSimdedgeBin that also returns the process's
// output (its log) as it grows.
func startSimdedgeOut(t testing.TB, bin, conf, addr string) (stop func(), out *testproc.Output) {
	t.Helper()
	p := testproc.Serve(t, bin, conf, addr, testproc.Options{Name: "simdedge", StartWait: startWait, StopWait: stopWait})
	return p.Stop, p.Out
}

// pollEvery spaces the connection attempts that wait for a listener.
const pollEvery = 50 * time.Millisecond

// waitListening waits until addr accepts connections, within startWait.
func waitListening(t testing.TB, addr string) {
	t.Helper()
	deadline := time.Now().Add(startWait)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("nothing listens on %s after %v: %v", addr, startWait, err)
		}
		time.Sleep(pollEvery)
	}
}
