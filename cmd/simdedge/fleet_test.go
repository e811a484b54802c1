//go:build fleet

package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/simdedge/simdedge/server/config"
	"github.com/simdedge/simdedge/server/xds"
)

// TestFleetReloadKeepsXDS: a reload of the file (SIGHUP, admin POST
// /reload) applies its static part beside what the control plane last
// sent, and refuses a change of dynamic.xds itself.
func TestFleetReloadKeepsXDS(t *testing.T) {
	file := filepath.Join(t.TempDir(), "edge.yaml")
	head := "dynamic: {xds: {server: \"127.0.0.1:18000\", node_id: edge-1}}\n"
	writeFile(t, file, head+"routes: [{match: {path: /static}, respond: {status: 200, body: one}}]\n")
	cfg, err := config.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	f := &fleet{x: cfg.XDS(), file: file, last: &xds.Fragment{Routes: []xds.Route{
		{Name: "xds:r", Match: xds.Match{PathPrefix: "/x/"}, Respond: &xds.Respond{Status: 200, Body: "from xds"}}}}}
	writeFile(t, file, head+"routes: [{match: {path: /static}, respond: {status: 200, body: two}}]\n")
	next, err := config.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	merged, err := f.reload(next)
	if err != nil {
		t.Fatal(err)
	}
	if len(merged.Routes) != 2 || merged.Routes[0].Respond.Body != "two" || merged.Routes[1].Name != "xds:r" {
		t.Errorf("reloaded routes = %+v", merged.Routes)
	}
	writeFile(t, file, strings.Replace(head, "18000", "18001", 1)+"routes: [{respond: {status: 200}}]\n")
	moved, err := config.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.reload(moved); err == nil || !strings.Contains(err.Error(), "dynamic.xds: cannot be changed by a reload") {
		t.Errorf("changed dynamic.xds: err = %v", err)
	}
}

// TestFleetListenRefused: -listen names the one tcp listener of a file;
// with dynamic.xds the listeners come from the control plane.
func TestFleetListenRefused(t *testing.T) {
	file := filepath.Join(t.TempDir(), "edge.yaml")
	writeFile(t, file, "dynamic: {xds: {server: \"127.0.0.1:1\", node_id: edge-1}}\n")
	var stdout, stderr bytes.Buffer
	if code := runServe(context.Background(), []string{"-listen", "127.0.0.1:0", file}, &stdout, &stderr); code != 1 ||
		!strings.Contains(stderr.String(), "-listen cannot be combined with dynamic.xds") {
		t.Errorf("code %d, stderr %q", code, stderr.String())
	}
}

// TestFleetUpdateAfterReload: an update merged before a reload of the
// file is merged again with the reloaded file when the serve loop takes
// it, so that it does not bring the old static part back.
func TestFleetUpdateAfterReload(t *testing.T) {
	head := "dynamic: {xds: {server: \"127.0.0.1:18000\", node_id: edge-1}}\n"
	parse := func(body string) ([]byte, *config.Config) {
		t.Helper()
		b := []byte(head + "routes: [{match: {path: /static}, respond: {status: 200, body: " + body + "}}]\n")
		c, err := config.Parse(b)
		if err != nil {
			t.Fatal(err)
		}
		return b, c
	}
	fr := &xds.Fragment{Routes: []xds.Route{{Name: "xds:r", Match: xds.Match{PathPrefix: "/x/"}, Respond: &xds.Respond{Status: 200, Body: "x"}}}}
	oldB, oldC := parse("old")
	merged, err := xds.Merge(oldB, oldC, fr)
	if err != nil {
		t.Fatal(err)
	}
	newB, newC := parse("new")
	f := &fleet{static: newB, staticCfg: newC, gen: 1}
	got, err := f.current(fleetUpdate{cfg: merged, gen: 0, fr: fr})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Routes) != 2 || got.Routes[0].Respond.Body != "new" || got.Routes[1].Name != "xds:r" {
		t.Errorf("routes after the reload = %+v", got.Routes)
	}
	if same, _ := f.current(fleetUpdate{cfg: merged, gen: 1, fr: fr}); same != merged {
		t.Error("an update of the current generation was merged again")
	}
}
