package fleettest

import (
	"crypto/tls"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	cachetypes "github.com/envoyproxy/go-control-plane/pkg/cache/types"
	"github.com/simdedge/simdedge/internal/testcert"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
)

// Each edge runs another engine or proxy path, so every update path is
// exercised on each.
var engines = []string{
	"engine: loop\nproxy_on_loop: true\n",
	"engine: loop\nproxy_on_loop: false\n",
	"engine: goroutine\n",
}

// fleet is a control plane, three edges and their listener addresses.
type fleet struct {
	cp     *controlPlane
	edges  []*edge
	nodes  []string
	listen map[string]string
	st     *state
}

// protocols runs a test over state-of-the-world and incremental xDS.
func protocols(t *testing.T, test func(t *testing.T, delta bool)) {
	for _, delta := range []bool{false, true} {
		name := "sotw"
		if delta {
			name = "delta"
		}
		t.Run(name, func(t *testing.T) { test(t, delta) })
	}
}

func newFleet(t *testing.T, delta bool, backends ...string) *fleet {
	t.Helper()
	return newFleetWith(t, fmt.Sprintf(", delta: %t", delta), nil, backends...)
}

// newFleetWith starts the control plane with opts and edges whose
// dynamic.xds has xdsExtra.
func newFleetWith(t *testing.T, xdsExtra string, opts []grpc.ServerOption, backends ...string) *fleet {
	t.Helper()
	f := &fleet{cp: startControlPlane(t, "127.0.0.1:0", opts...), listen: map[string]string{}}
	for i := range engines {
		n := "edge-" + strconv.Itoa(i+1)
		f.nodes = append(f.nodes, n)
		f.listen[n] = freePort(t)
	}
	f.st = newState(f.listen, "v1", backends...)
	f.cp.set(t, f.st, f.nodes)
	for i, n := range f.nodes {
		f.edges = append(f.edges, startEdge(t, n, f.cp.addr, f.listen[n], engines[i], xdsExtra))
	}
	return f
}

// bump publishes a new version of the types in which (0 listener, 1
// route, 2 cluster, 3 endpoint).
func (f *fleet) bump(t *testing.T, which ...int) {
	t.Helper()
	for _, w := range which {
		v, _ := strconv.Atoi(f.st.versions[w])
		f.st.versions[w] = strconv.Itoa(v + 1)
	}
	f.cp.set(t, f.st, f.nodes)
}

// TestFleetPropagation: route changes and endpoint changes reach all
// three edges; the time from the control plane's update to an edge
// answering with it is reported (p50, p99, max; the goal is a p99 under
// 1s on loopback, which the test does not assert: the machine is shared).
func TestFleetPropagation(t *testing.T) { protocols(t, testFleetPropagation) }

func testFleetPropagation(t *testing.T, delta bool) {
	b1, b2 := backend(t, "b1"), backend(t, "b2")
	f := newFleet(t, delta, b1)
	for _, e := range f.edges {
		e.await(t, "/version", "v1", time.Now())
		e.await(t, "/app/x", "b1", time.Now())
	}
	rounds := 20
	if testing.Short() {
		rounds = 5
	}
	var routeLat, epLat []time.Duration
	for i := range rounds {
		body := "v" + strconv.Itoa(i+2)
		f.st.routes = []cachetypes.Resource{routes(body, false)}
		start := time.Now()
		f.bump(t, 1)
		routeLat = append(routeLat, f.awaitAll(t, "/version", body, start)...)

		want, addr := "b2", b2
		if i%2 == 1 {
			want, addr = "b1", b1
		}
		f.st.endpoints = []cachetypes.Resource{assignment(addr)}
		start = time.Now()
		f.bump(t, 3)
		epLat = append(epLat, f.awaitAll(t, "/app/x", want, start)...)
	}
	report(t, protoName(delta)+" route change", routeLat)
	report(t, protoName(delta)+" endpoint change", epLat)
	// Endpoint changes took the path that keeps the routing table.
	for _, e := range f.edges {
		if !strings.Contains(e.out.String(), `"endpoints_only":true`) {
			t.Errorf("%s applied no update as endpoints only", e.node)
		}
	}
	for _, e := range f.edges {
		if c := e.adminConfig(t); !strings.Contains(c, "xds_status:") || !strings.Contains(c, "connected: true") {
			t.Errorf("%s: admin /config without the xds state:\n%s", e.node, c)
		}
	}
}

func protoName(delta bool) string {
	if delta {
		return "delta"
	}
	return "sotw"
}

// awaitAll waits for every edge to answer path with want, in parallel,
// and returns each edge's delay from start.
func (f *fleet) awaitAll(t *testing.T, path, want string, start time.Time) []time.Duration {
	t.Helper()
	out := make([]time.Duration, len(f.edges))
	var wg sync.WaitGroup
	for i, e := range f.edges {
		wg.Go(func() {
			deadline := time.Now().Add(applyWait)
			for time.Now().Before(deadline) {
				if code, body, err := e.get(path); err == nil && code == 200 && body == want {
					out[i] = time.Since(start)
					return
				}
				time.Sleep(pollEvery)
			}
			out[i] = -1
		})
	}
	wg.Wait()
	for i, d := range out {
		if d < 0 {
			t.Fatalf("%s: %s did not become %q within %v", f.edges[i].node, path, want, applyWait)
		}
	}
	return out
}

// report logs the percentiles of ds (nearest rank), and appends them to
// $FLEET_REPORT when set.
func report(t *testing.T, what string, ds []time.Duration) {
	t.Helper()
	s := slices.Clone(ds)
	slices.Sort(s)
	pct := func(p float64) time.Duration {
		i := int(p*float64(len(s))+0.999999) - 1
		return s[max(0, min(i, len(s)-1))]
	}
	line := fmt.Sprintf("%s propagation over %d samples (3 edges): p50 %v, p99 %v, max %v",
		what, len(s), pct(0.50).Round(time.Microsecond), pct(0.99).Round(time.Microsecond), s[len(s)-1].Round(time.Microsecond))
	t.Log(line)
	if p := os.Getenv("FLEET_REPORT"); p != "" {
		if fh, err := os.OpenFile(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
			fmt.Fprintln(fh, line)
			fh.Close()
		}
	}
}

// churnFor is how long TestFleetChurn runs: FLEET_CHURN (a duration;
// the figure is 30s), or 3s.
func churnFor(t *testing.T) time.Duration {
	if s := os.Getenv("FLEET_CHURN"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 || d > 10*time.Minute {
			t.Fatalf("FLEET_CHURN=%q: want a duration up to 10m", s)
		}
		return d
	}
	return 3 * time.Second
}

// TestFleetChurn: the endpoints change every 100ms while clients load
// all three edges; no request fails. Every backend stays up: an
// endpoint removed from EDS finishes what it was sent.
func TestFleetChurn(t *testing.T) { protocols(t, testFleetChurn) }

func testFleetChurn(t *testing.T, delta bool) {
	bs := []string{backend(t, "b1"), backend(t, "b2"), backend(t, "b3")}
	f := newFleet(t, delta, bs...)
	for _, e := range f.edges {
		e.await(t, "/version", "v1", time.Now())
	}
	dur := churnFor(t)
	stop := make(chan struct{})
	var ok, failed atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	for _, e := range f.edges {
		for range 2 {
			wg.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					code, body, err := e.get("/app/load")
					if err != nil || code != 200 || len(body) != 2 || body[0] != 'b' {
						failed.Add(1)
						firstErr.CompareAndSwap(nil, fmt.Sprintf("%s: %d %q %v", e.node, code, body, err))
						continue
					}
					ok.Add(1)
				}
			})
		}
	}
	sets := [][]string{{bs[0], bs[1]}, {bs[1], bs[2]}, {bs[2], bs[0]}, {bs[0]}, bs}
	tick := time.NewTicker(100 * time.Millisecond)
	end := time.After(dur)
	changes := 0
churn:
	for {
		select {
		case <-end:
			break churn
		case <-tick.C:
			changes++
			f.st.endpoints = []cachetypes.Resource{assignment(sets[changes%len(sets)]...)}
			f.bump(t, 3)
		}
	}
	tick.Stop()
	close(stop)
	wg.Wait()
	t.Logf("endpoint churn: %d changes in %v, %d requests served, %d failed", changes, dur, ok.Load(), failed.Load())
	if failed.Load() != 0 {
		t.Errorf("%d requests failed under churn; first: %v", failed.Load(), firstErr.Load())
	}
	if ok.Load() == 0 {
		t.Error("no request served")
	}
}

// TestFleetNack: a route configuration with a regex that does not
// compile is NACKed by every edge, naming the field; they serve the last
// good configuration on and show the NACK on the admin /config; the next
// good version is applied.
func TestFleetNack(t *testing.T) { protocols(t, testFleetNack) }

func testFleetNack(t *testing.T, delta bool) {
	f := newFleet(t, delta, backend(t, "b1"))
	for _, e := range f.edges {
		e.await(t, "/version", "v1", time.Now())
	}
	f.st.routes = []cachetypes.Resource{routes("v-bad", true)}
	f.bump(t, 1)
	deadline := time.Now().Add(applyWait)
	for _, n := range f.nodes {
		for f.cp.nacked(n, "safe_regex.regex: does not compile") == 0 {
			if time.Now().After(deadline) {
				t.Fatalf("%s sent no NACK naming the regex", n)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	for _, e := range f.edges {
		if code, body, err := e.get("/version"); err != nil || code != 200 || body != "v1" {
			t.Errorf("%s after the NACK: %d %q %v, want the last good v1", e.node, code, body, err)
		}
		if c := e.adminConfig(t); !strings.Contains(c, "last_nack:") || !strings.Contains(c, "does not compile") {
			t.Errorf("%s: admin /config shows no NACK:\n%s", e.node, c)
		}
		m := e.adminGet(t, "/metrics")
		for _, want := range []string{"simdedge_xds_connected 1", `simdedge_xds_responses_total{result="nack"}`, "simdedge_xds_last_nack_timestamp_seconds{type="} {
			if !strings.Contains(m, want) {
				t.Errorf("%s: /metrics has no %s", e.node, want)
			}
		}
	}
	f.st.routes = []cachetypes.Resource{routes("v2", false)}
	start := time.Now()
	f.bump(t, 1)
	f.awaitAll(t, "/version", "v2", start)
}

// TestFleetControlPlaneRestart: the control plane goes away; the edges
// serve on; a new one on the same address with a newer state is
// followed once they reconnect.
func TestFleetControlPlaneRestart(t *testing.T) { protocols(t, testFleetControlPlaneRestart) }

func testFleetControlPlaneRestart(t *testing.T, delta bool) {
	f := newFleet(t, delta, backend(t, "b1"))
	for _, e := range f.edges {
		e.await(t, "/version", "v1", time.Now())
	}
	f.cp.stop()
	// Served while the control plane is gone, through a few of the
	// edges' reconnection attempts.
	for range 10 {
		for _, e := range f.edges {
			if code, body, err := e.get("/version"); err != nil || code != 200 || body != "v1" {
				t.Fatalf("%s without a control plane: %d %q %v", e.node, code, body, err)
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	cp := startControlPlane(t, f.cp.addr)
	f.cp = cp
	f.st.routes = []cachetypes.Resource{routes("after-restart", false)}
	f.st.versions = [4]string{"r1", "r1", "r1", "r1"}
	start := time.Now()
	f.cp.set(t, f.st, f.nodes)
	f.awaitAll(t, "/version", "after-restart", start)
}

// TestFleetTLS: the edges reach a control plane that requires mutual
// TLS through dynamic.xds.tls (its CA, the name to verify, a client
// certificate), and follow it.
func TestFleetTLS(t *testing.T) {
	ca := testcert.NewCA(t, "control plane CA")
	leaf := ca.Leaf(t, "cp", []string{"cp.test"}, time.Time{}, time.Time{})
	client := ca.Client(t, "edge", "edge")
	creds := credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{leaf.TLS}, ClientCAs: ca.Pool,
		ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS13})
	xdsTLS := fmt.Sprintf(", tls: {ca: %q, server_name: cp.test, client_cert: {cert: %q, key: %q}}", ca.File, client.CertFile, client.KeyFile)
	f := newFleetWith(t, xdsTLS, []grpc.ServerOption{grpc.Creds(creds)}, backend(t, "b1"))
	for _, e := range f.edges {
		e.await(t, "/app/x", "b1", time.Now())
	}
	f.st.routes = []cachetypes.Resource{routes("over-tls", false)}
	start := time.Now()
	f.bump(t, 1)
	f.awaitAll(t, "/version", "over-tls", start)
}

// TestFleetReload: a file with static routes beside dynamic.xds; the
// static route wins where it overlaps an xDS one; a SIGHUP after the file
// changed applies its static part again with the control plane's beside
// it.
func TestFleetReload(t *testing.T) {
	static := "routes:\n  - {match: {path: /version}, respond: {status: 200, body: static-%d}}\n  - {match: {path: /static}, respond: {status: 200, body: s%d}}\n"
	f := &fleet{cp: startControlPlane(t, "127.0.0.1:0"), listen: map[string]string{}}
	f.nodes = []string{"edge-1"}
	f.listen["edge-1"] = freePort(t)
	f.st = newState(f.listen, "v1", backend(t, "b1"))
	f.cp.set(t, f.st, f.nodes)
	e := startEdge(t, "edge-1", f.cp.addr, f.listen["edge-1"], fmt.Sprintf(static, 1, 1), "")
	e.await(t, "/app/x", "b1", time.Now())
	e.await(t, "/version", "static-1", time.Now()) // the static route comes first
	conf, err := os.ReadFile(e.file)
	if err != nil {
		t.Fatal(err)
	}
	next := strings.Replace(string(conf), fmt.Sprintf(static, 1, 1), fmt.Sprintf(static, 2, 2), 1)
	if err := os.WriteFile(e.file, []byte(next), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := e.proc.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	e.await(t, "/static", "s2", time.Now())
	e.await(t, "/version", "static-2", time.Now())
	e.await(t, "/app/x", "b1", time.Now()) // the xDS routes stay
	// And the control plane's next update keeps the reloaded static part.
	f.st.endpoints = []cachetypes.Resource{assignment(backend(t, "b2"))}
	f.bump(t, 3)
	e.await(t, "/app/x", "b2", time.Now())
	e.await(t, "/static", "s2", time.Now())
}

// TestFleetStartWithoutControlPlane: a file with routes of its own
// serves them after initial_fetch_timeout when the control plane is not
// there, keeps trying with backoff, and follows the control plane once
// it comes up.
func TestFleetStartWithoutControlPlane(t *testing.T) {
	cpAddr := freePort(t) // nothing listens there yet
	listen, staticAddr := freePort(t), freePort(t)
	static := fmt.Sprintf("listen: %q\nroutes: [{match: {path: /static}, respond: {status: 200, body: static}}]\n", staticAddr)
	e := startEdge(t, "edge-1", cpAddr, staticAddr, static, ", initial_fetch_timeout: 1s")
	e.await(t, "/static", "static", time.Now())
	cp := startControlPlane(t, cpAddr)
	st := newState(map[string]string{"edge-1": listen}, "from-cp", backend(t, "b1"))
	cp.set(t, st, []string{"edge-1"})
	// The xDS listener opens beside the static one once the edge
	// reconnects (its backoff is at most 10s).
	x := &edge{node: "edge-1 (xds listener)", addr: listen, client: e.client, out: e.out}
	x.await(t, "/version", "from-cp", time.Now())
	e.await(t, "/static", "static", time.Now())
}
