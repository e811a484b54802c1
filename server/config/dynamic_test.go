package config

import (
	"strings"
	"testing"
)

func TestDynamicOnly(t *testing.T) {
	c, err := Parse([]byte("dynamic: {xds: {server: \"127.0.0.1:18000\", node_id: edge-1, cluster: edge}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	x := c.XDS()
	if x == nil || x.Server != "127.0.0.1:18000" || x.NodeID != "edge-1" || x.Cluster != "edge" {
		t.Fatalf("xds = %+v", x)
	}
	if got := c.WithDefaults().XDS().InitialFetchTimeout; got != DefaultXDSInitialFetch {
		t.Errorf("initial_fetch_timeout default = %v", got)
	}
}

func TestDynamicErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"dynamic: {xds: {node_id: a}}\n", "dynamic.xds.server: missing"},
		{"dynamic: {xds: {server: \"nohost\", node_id: a}}\n", `dynamic.xds.server: must be "host:port"`},
		{"dynamic: {xds: {server: \"h:1\"}}\n", "dynamic.xds.node_id: missing"},
		{"dynamic: {}\n", "dynamic: needs xds"},
		{"dynamic: {xds: {server: \"h:1\", node_id: a, bogus: 1}}\n", "dynamic.xds.bogus"},
		// Without dynamic, routes are still required.
		{"listen: \"127.0.0.1:0\"\n", "at least one route is needed"},
	} {
		_, err := Parse([]byte(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err = %v, want %q", tc.in, err, tc.want)
		}
	}
}
