//go:build !fleet

package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestDynamicNeedsFleetBuild: without -tags fleet, check and serve refuse
// a file with dynamic.xds and say how to get a binary that follows it.
func TestDynamicNeedsFleetBuild(t *testing.T) {
	file := filepath.Join(t.TempDir(), "dyn.yaml")
	writeFile(t, file, "dynamic: {xds: {server: \"127.0.0.1:18000\", node_id: edge-1}}\n")
	var stdout, stderr bytes.Buffer
	if code := runCheck([]string{file}, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), "built without fleet support") ||
		!strings.Contains(stderr.String(), "-tags fleet") {
		t.Errorf("check: code %d, stderr %q", code, stderr.String())
	}
	stderr.Reset()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if code := runServe(ctx, []string{file}, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), "built without fleet support") {
		t.Errorf("serve: code %d, stderr %q", code, stderr.String())
	}
}
