package xds

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"

	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
)

// sent is one request the client sent.
type sent struct {
	typ, version, nonce string
	names               []string
	detail              string
}

func response(t *testing.T, typ, version string, ms ...proto.Message) *discoveryv3.DiscoveryResponse {
	t.Helper()
	r := &discoveryv3.DiscoveryResponse{TypeUrl: typ, VersionInfo: version, Nonce: "n" + version}
	for _, m := range ms {
		a, err := anypb.New(m)
		if err != nil {
			t.Fatal(err)
		}
		r.Resources = append(r.Resources, a)
	}
	return r
}

// TestHandle walks the state-of-the-world exchange: CDS and LDS are
// ACKed and make the client subscribe to EDS and RDS by name; the set is
// applied once complete; an invalid update is NACKed with the version
// last accepted and the field named, and the accepted state stays.
func TestHandle(t *testing.T) {
	var applied []*Resources
	var applyErr error
	c := New(Options{Server: "test", Apply: func(r *Resources) error {
		if applyErr != nil {
			return applyErr
		}
		applied = append(applied, r)
		return nil
	}})
	var out []sent
	send := func(typ, version, nonce string, detail error) error {
		s := sent{typ: typ, version: version, nonce: nonce, names: c.sub[typ]}
		if detail != nil {
			s.detail = detail.Error()
		}
		out = append(out, s)
		return nil
	}
	fx := testResources()
	step := func(resp *discoveryv3.DiscoveryResponse) {
		t.Helper()
		if err := c.handle(resp, send); err != nil {
			t.Fatal(err)
		}
	}
	step(response(t, ClusterType, "1", fx.Clusters["backend"]))
	step(response(t, ListenerType, "1", fx.Listeners["edge"]))
	if len(applied) != 0 {
		t.Fatal("applied before the routes and endpoints arrived")
	}
	want := []sent{
		{typ: ClusterType, version: "1", nonce: "n1"},
		{typ: EndpointType, names: []string{"backend"}},
		{typ: ListenerType, version: "1", nonce: "n1"},
		{typ: RouteType, names: []string{"local"}},
	}
	if !sameSent(out, want) {
		t.Fatalf("requests = %+v\nwant %+v", out, want)
	}
	if !c.Status().Waiting {
		t.Error("status does not say it waits")
	}
	step(response(t, EndpointType, "1", fx.Endpoints["backend"]))
	step(response(t, RouteType, "1", fx.Routes["local"]))
	if len(applied) != 1 || c.Status().Applied != 1 || c.Status().Waiting {
		t.Fatalf("applied %d times, status %+v", len(applied), c.Status())
	}
	// An invalid route configuration: NACKed, version 1 stays.
	rc := testRoutes("local", "backend")
	rc.VirtualHosts[0].Routes[0].Match.PathSpecifier = nil
	out = nil
	step(response(t, RouteType, "2", rc))
	if len(out) != 1 || out[0].version != "1" || out[0].nonce != "n2" || !strings.Contains(out[0].detail, `virtual_hosts[0].routes[0].match: needs prefix, path or safe_regex`) {
		t.Fatalf("NACK = %+v", out)
	}
	st := c.Status()
	if st.Versions[RouteType] != "1" || st.Nacks != 1 || st.LastNack == nil || st.LastNack.Version != "2" || len(applied) != 1 {
		t.Errorf("after the NACK: %+v", st)
	}
	// A refusal by Apply (the serve loop's reload failed) is a NACK too.
	applyErr = errors.New("config: refused")
	out = nil
	step(response(t, EndpointType, "2", testAssignment("backend", ep{host: "127.0.0.1", port: 9005})))
	if len(out) != 1 || out[0].version != "1" || out[0].detail != "config: refused" || !proto.Equal(c.res.Endpoints["backend"], fx.Endpoints["backend"]) {
		t.Errorf("apply refused: %+v", out)
	}
}

func sameSent(a, b []sent) bool {
	return slices.EqualFunc(a, b, func(x, y sent) bool {
		return x.typ == y.typ && x.version == y.version && x.nonce == y.nonce && slices.Equal(x.names, y.names) && x.detail == y.detail
	})
}

func TestBackoff(t *testing.T) {
	c := New(Options{BackoffMin: 100e6, BackoffMax: 1e9})
	for fails := range 40 {
		d := c.backoff(fails)
		if d < 50e6 || d > 1.05e9 {
			t.Fatalf("backoff(%d) = %v", fails, d)
		}
	}
}

// TestNackHeld: a control plane that sends a refused version again at
// once (go-control-plane's cache answers a NACK so) gets the repeated
// NACK after a growing delay, not in a busy loop; a new version is
// answered at once.
func TestNackHeld(t *testing.T) {
	c := New(Options{Server: "test", Apply: func(*Resources) error { return nil }})
	var out []sent
	send := func(typ, version, nonce string, detail error) error {
		out = append(out, sent{typ: typ, version: version, nonce: nonce})
		return nil
	}
	var holds []time.Duration
	c.held = func(d time.Duration, req func() error) { holds = append(holds, d) }
	bad := testCluster("backend")
	bad.LbPolicy = clusterv3.Cluster_CLUSTER_PROVIDED
	for range 3 {
		if err := c.handle(response(t, ClusterType, "2", bad), send); err != nil {
			t.Fatal(err)
		}
	}
	if len(out) != 1 || len(holds) != 2 || holds[0] != nackHoldMin || holds[1] != 2*nackHoldMin {
		t.Fatalf("sent %d NACKs at once, held %v", len(out), holds)
	}
	if err := c.handle(response(t, ClusterType, "3", bad), send); err != nil {
		t.Fatal(err)
	}
	if len(out) != 2 || out[1].nonce != "n3" {
		t.Errorf("a new version's NACK was not sent at once: %+v", out)
	}
}

// TestHandleDelta: incremental responses add and replace resources by
// name and remove those named in removed_resources; the rest stay.
func TestHandleDelta(t *testing.T) {
	var applied []*Resources
	c := New(Options{Server: "test", Delta: true, Apply: func(r *Resources) error { applied = append(applied, r); return nil }})
	var out []sent
	send := func(typ, version, nonce string, detail error) error {
		out = append(out, sent{typ: typ, nonce: nonce, names: c.sub[typ]})
		return nil
	}
	fx := testResources()
	take := func(typ, version string, removed []string, ms ...proto.Message) {
		t.Helper()
		r := response(t, typ, version, ms...)
		if err := c.take(update{typ: typ, version: version, nonce: r.Nonce, resources: r.Resources, delta: true, removed: removed}, send); err != nil {
			t.Fatal(err)
		}
	}
	take(ClusterType, "1", nil, fx.Clusters["backend"])
	take(ClusterType, "2", nil, testCluster("other"))
	if len(c.res.Clusters) != 2 {
		t.Fatalf("clusters after two deltas: %v", len(c.res.Clusters))
	}
	// A subscription change carries no nonce (it is no ACK).
	if out[1].typ != EndpointType || out[1].nonce != "" || len(out[1].names) != 1 {
		t.Errorf("EDS subscription = %+v", out[1])
	}
	take(ClusterType, "3", []string{"other"})
	if _, ok := c.res.Clusters["other"]; ok || len(c.res.Clusters) != 1 {
		t.Errorf("removed cluster kept: %v", len(c.res.Clusters))
	}
	take(EndpointType, "1", nil, fx.Endpoints["backend"])
	take(ListenerType, "1", nil, fx.Listeners["edge"])
	take(RouteType, "1", nil, fx.Routes["local"])
	// Applied when the assignment completed the clusters (no listener
	// yet), not while the listener waited for its routes, then again.
	if len(applied) != 2 || len(applied[1].Routes) != 1 || len(applied[1].Clusters) != 1 {
		t.Errorf("applied %d times", len(applied))
	}
}
