package fleettest

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/simdedge/simdedge/internal/testproc"
)

// Bounds, generous for a busy 2-CPU machine.
const (
	startWait   = 30 * time.Second // an edge's listener up (it waits for the control plane first)
	stopWait    = 20 * time.Second // its drain after SIGTERM
	applyWait   = 15 * time.Second // one change seen on an edge
	pollEvery   = time.Millisecond
	httpTimeout = 5 * time.Second
)

var simdedgeBin, buildErr string

func TestMain(m *testing.M) { os.Exit(runMain(m)) }

func runMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "simdedge-fleettest-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "simdedge")
	// The fleet build of the root module: the binary a fleet runs;
	// FLEET_RACE=1 builds it with the race detector (a report in an
	// edge's output fails its test).
	args := []string{"build", "-tags", "fleet", "-o", bin}
	if os.Getenv("FLEET_RACE") == "1" {
		args = append(args, "-race")
	}
	cmd := exec.Command("go", append(args, "./cmd/simdedge")...)
	cmd.Dir = ".."
	if out, err := cmd.CombinedOutput(); err == nil {
		simdedgeBin = bin
	} else {
		buildErr = fmt.Sprintf("building simdedge -tags fleet: %v\n%s", err, out)
	}
	return m.Run()
}

func freePort(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// backend answers every request with its name.
func backend(t *testing.T, name string) string {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		io.WriteString(w, name)
	}))
	t.Cleanup(s.Close)
	return s.Listener.Addr().String()
}

// edge is one simdedge process.
type edge struct {
	node, addr, admin string
	client            *http.Client
	out               *testproc.Output
	file              string      // its configuration file
	proc              *os.Process // the process, to signal by its PID
}

// startEdge runs simdedge following the control plane at cp as node,
// with extra top-level keys (the engine), and waits for its listener
// at addr (which the control plane's listener names).
// xdsExtra adds keys to dynamic.xds (", delta: true").
func startEdge(t *testing.T, node, cp, addr, extra, xdsExtra string) *edge {
	t.Helper()
	if simdedgeBin == "" {
		t.Fatal(buildErr)
	}
	e := &edge{node: node, addr: addr, admin: freePort(t),
		client: &http.Client{Timeout: httpTimeout, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}}
	// Cleanups run last first: the connections close once the edge has stopped.
	t.Cleanup(e.client.CloseIdleConnections)
	conf := fmt.Sprintf("dynamic: {xds: {server: %q, node_id: %s, cluster: edge%s}}\nadmin: {address: %q}\n%s", cp, node, xdsExtra, e.admin, extra)
	p := testproc.Serve(t, simdedgeBin, conf, addr, testproc.Options{Name: node, StartWait: startWait, StopWait: stopWait})
	e.out, e.file, e.proc = p.Out, p.File, p.Process
	return e
}

// get fetches path from the edge: the status and body, or an error.
func (e *edge) get(path string) (int, string, error) {
	resp, err := e.client.Get("http://" + e.addr + path)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// await polls path until its body is want, and returns how long that
// took from since; it fails the test after applyWait.
func (e *edge) await(t *testing.T, path, want string, since time.Time) time.Duration {
	t.Helper()
	deadline := time.Now().Add(applyWait)
	for {
		if code, body, err := e.get(path); err == nil && code == 200 && body == want {
			return time.Since(since)
		}
		if time.Now().After(deadline) {
			_, body, err := e.get(path)
			t.Fatalf("%s: %s did not become %q within %v (last %q, %v)", e.node, path, want, applyWait, body, err)
		}
		time.Sleep(pollEvery)
	}
}

// adminConfig is the edge's admin /config.
func (e *edge) adminConfig(t *testing.T) string {
	t.Helper()
	return e.adminGet(t, "/config")
}

// adminGet is the body of an admin endpoint.
func (e *edge) adminGet(t *testing.T, path string) string {
	t.Helper()
	resp, err := e.client.Get("http://" + e.admin + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}
