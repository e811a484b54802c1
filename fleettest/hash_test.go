package fleettest

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	cachetypes "github.com/envoyproxy/go-control-plane/pkg/cache/types"
)

// hashKeys is how many keys TestFleetHashAgrees sends through each edge.
const hashKeys = 60

// TestFleetHashAgrees: a MAGLEV cluster hashed on a header sends each key
// to the same backend whichever edge ECMP would pick (the Maglev table
// depends only on the targets' addresses and weights), and after a
// backend leaves the edges still agree, with the keys of the backends
// that stayed mostly where they were.
func TestFleetHashAgrees(t *testing.T) {
	bs := []string{backend(t, "b1"), backend(t, "b2"), backend(t, "b3")}
	f := newFleet(t, false, bs...)
	c := cluster()
	c.LbPolicy = clusterv3.Cluster_MAGLEV
	rc := routes("hashed", false)
	rc.VirtualHosts[0].Routes[1].GetRoute().HashPolicy = []*routev3.RouteAction_HashPolicy{{PolicySpecifier: &routev3.RouteAction_HashPolicy_Header_{
		Header: &routev3.RouteAction_HashPolicy_Header{HeaderName: "x-user"}}}}
	f.st.clusters, f.st.routes = []cachetypes.Resource{c}, []cachetypes.Resource{rc}
	f.bump(t, 1, 2)
	for _, e := range f.edges {
		e.await(t, "/version", "hashed", time.Now()) // the hashed route is in force
	}
	before := f.placement(t)
	used := map[string]bool{}
	for _, b := range before {
		used[b] = true
	}
	if len(used) < 2 {
		t.Errorf("%d keys all went to %v", hashKeys, used)
	}
	f.st.endpoints = []cachetypes.Resource{assignment(bs[0], bs[1])}
	f.bump(t, 3)
	for _, e := range f.edges {
		awaitNot(t, e, "b3")
	}
	after := f.placement(t)
	moved := 0
	for k, b := range before {
		if b != "b3" && after[k] != b {
			moved++
		}
	}
	t.Logf("maglev over 3 edges: %d keys on %d backends; after b3 left, %d of the keys of b1 and b2 moved", hashKeys, len(used), moved)
	if moved > hashKeys/4 {
		t.Errorf("%d of %d keys of the backends that stayed moved", moved, hashKeys)
	}
}

// placement asks every edge for every key and returns the backend of
// each key, failing when two edges disagree.
func (f *fleet) placement(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for i := range hashKeys {
		key := "user-" + strconv.Itoa(i)
		for _, e := range f.edges {
			got := e.getKey(t, key)
			if prev, ok := out[key]; ok && prev != got {
				t.Fatalf("key %s: %s answers %s, another edge %s", key, e.node, got, prev)
			}
			out[key] = got
		}
	}
	return out
}

// getKey is the backend that answers /app/k with x-user: key.
func (e *edge) getKey(t *testing.T, key string) string {
	t.Helper()
	req, _ := http.NewRequest("GET", "http://"+e.addr+"/app/k", nil)
	req.Header.Set("x-user", key)
	resp, err := e.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b := make([]byte, 8)
	n, _ := resp.Body.Read(b)
	if resp.StatusCode != 200 {
		t.Fatalf("%s: %d for key %s", e.node, resp.StatusCode, key)
	}
	return string(b[:n])
}

// awaitNot waits until no key of the probe set reaches backend name
// through e.
func awaitNot(t *testing.T, e *edge, name string) {
	t.Helper()
	deadline := time.Now().Add(applyWait)
	for {
		seen := false
		for i := range hashKeys {
			if e.getKey(t, "user-"+strconv.Itoa(i)) == name {
				seen = true
				break
			}
		}
		if !seen {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s still sends keys to %s after %v", e.node, name, applyWait)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
