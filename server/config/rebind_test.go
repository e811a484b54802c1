package config

import (
	"errors"
	"testing"

	"github.com/simdedge/simdedge/server/proxy"
)

// TestRebind: an update of targets alone gives the proxy routes new
// upstreams (keeping the targets that stay) under the same routing table.
func TestRebind(t *testing.T) {
	build := func(targets string, o BuildOptions) (*Config, *Snapshot) {
		t.Helper()
		c, err := Parse([]byte("upstreams: [{name: api, targets: [" + targets + "]}]\nroutes:\n  - {match: {path: /a}, respond: {status: 200}}\n  - {proxy: {upstream: api}}\n"))
		if err != nil {
			t.Fatal(err)
		}
		if o.Previous != nil {
			return c, nil
		}
		s, err := c.Build(o)
		if err != nil {
			t.Fatal(err)
		}
		return c, s
	}
	addrs := func(h any) []string {
		var out []string
		for _, tg := range h.(*proxy.Slot).Proxy().Upstream().Pool().Targets() {
			out = append(out, tg.Address())
		}
		return out
	}
	_, s := build(`"127.0.0.1:1", "127.0.0.1:2"`, BuildOptions{Swappable: true})
	s.Start(nil)
	route := s.Table.Routes()[1]
	kept := s.Upstreams["api"].Pool().Targets()[1]
	c2, _ := build(`"127.0.0.1:2", "127.0.0.1:3"`, BuildOptions{Previous: s})
	n, err := s.Rebind(c2, BuildOptions{Previous: s, Swappable: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := addrs(route.Handler); len(got) != 2 || got[0] != "127.0.0.1:1" {
		t.Fatalf("before Commit the route forwards to %v", got)
	}
	n.Commit()
	n.Start(s)
	s.Close()
	defer n.Close()
	if n.Table != s.Table {
		t.Error("Rebind built a new table")
	}
	if got := addrs(n.Table.Routes()[1].Handler); len(got) != 2 || got[0] != "127.0.0.1:2" || got[1] != "127.0.0.1:3" {
		t.Errorf("after Commit the route forwards to %v", got)
	}
	if n.Upstreams["api"].Pool().Targets()[0] != kept {
		t.Error("the target that stayed is not the same Target (its health and connections)")
	}
	// A snapshot built without Swappable cannot be rebound.
	_, plain := build(`"127.0.0.1:1"`, BuildOptions{})
	defer plain.Close()
	if _, err := plain.Rebind(c2, BuildOptions{}); !errors.Is(err, ErrRebind) {
		t.Errorf("plain snapshot: err = %v", err)
	}
}

func TestWithTargets(t *testing.T) {
	c, err := Parse([]byte("upstreams: [{name: api, targets: [\"127.0.0.1:1\"], max_conns_per_target: 4}]\nroutes: [{proxy: {upstream: api}}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	n, err := c.WithTargets(map[string]TargetUpdate{"api": {Targets: []Target{{Address: "127.0.0.1:2", Weight: 3}, {Address: "[::1]:3"}}, MaxConnsPerTarget: 2}})
	if err != nil {
		t.Fatal(err)
	}
	if u := n.Upstreams[0]; len(u.Targets) != 2 || u.Targets[0].Weight != 3 || u.MaxConnsPerTarget != 2 || c.Upstreams[0].Targets[0].Address != "127.0.0.1:1" {
		t.Errorf("updated %+v, original %+v", n.Upstreams[0], c.Upstreams[0])
	}
	for _, m := range []map[string]TargetUpdate{
		{"nope": {Targets: []Target{{Address: "127.0.0.1:2"}}}},
		{"api": {}},
		{"api": {Targets: []Target{{Address: "127.0.0.1:2"}, {Address: "127.0.0.1:2"}}}},
		{"api": {Targets: []Target{{Address: "no-port"}}}},
		{"api": {Targets: []Target{{Address: "rdma://127.0.0.1:2"}}}},
	} {
		if _, err := c.WithTargets(m); !errors.Is(err, ErrTargets) {
			t.Errorf("%v: err = %v", m, err)
		}
	}
}
