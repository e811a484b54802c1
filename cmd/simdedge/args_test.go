package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestParseConfigArgs: the configuration file comes from -config or from a
// lone positional argument, with flags on either side of it; more than one
// file, or two different ones, is an error.
func TestParseConfigArgs(t *testing.T) {
	for _, tc := range []struct {
		args []string
		file string
		err  error
	}{
		{nil, "", nil},
		{[]string{"-config", "a.yaml"}, "a.yaml", nil},
		{[]string{"a.yaml"}, "a.yaml", nil},
		{[]string{"a.yaml", "-listen", "127.0.0.1:0"}, "a.yaml", nil},
		{[]string{"-listen", "127.0.0.1:0", "a.yaml"}, "a.yaml", nil},
		{[]string{"-config", "a.yaml", "a.yaml"}, "a.yaml", nil},
		{[]string{"-config", "./a.yaml", "a.yaml"}, "a.yaml", nil},
		{[]string{"--", "-a.yaml"}, "-a.yaml", nil},
		{[]string{"a.yaml", "b.yaml"}, "", errExtraArgs},
		{[]string{"a.yaml", "-listen", "x", "b.yaml"}, "", errExtraArgs},
		{[]string{"--", "a.yaml", "-listen"}, "", errExtraArgs},
		{[]string{"-config", "a.yaml", "b.yaml"}, "", errConflictConfig},
	} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		file := fs.String("config", "", "")
		fs.String("listen", "", "")
		err := parseConfigArgs(fs, tc.args, file)
		if !errors.Is(err, tc.err) {
			t.Errorf("%q: err %v, want %v", tc.args, err, tc.err)
			continue
		}
		if err == nil && *file != tc.file {
			t.Errorf("%q: file %q, want %q", tc.args, *file, tc.file)
		}
	}
}

// TestCheckPositionalConfig: `simdedge check FILE` checks FILE. Before,
// it checked the built-in configuration and exited 0 whatever FILE held.
func TestCheckPositionalConfig(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("timeouts:\n  idle: soon\nroutes: [{echo: {}}]\n"), 0o644)
	var stdout, stderr bytes.Buffer
	if code := run([]string{"check", bad}, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), "line 2: timeouts.idle") {
		t.Errorf("check bad.yaml: %d %q", code, stderr.String())
	}
	good := filepath.Join(dir, "good.yaml")
	os.WriteFile(good, []byte("listen: \"127.0.0.1:9\"\nroutes:\n  - match: {path: /hi}\n    respond: {status: 201}\n"), 0o644)
	stdout.Reset()
	stderr.Reset()
	if code := run([]string{"check", good}, &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), "127.0.0.1:9") ||
		strings.Contains(stdout.String(), "builtin: demo") {
		t.Errorf("check good.yaml: %d %q %q", code, stdout.String(), stderr.String())
	}
}

// TestServePositionalConfig: `simdedge serve FILE` serves FILE, with
// -listen after the file. Before, it served the built-in demo.
func TestServePositionalConfig(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "c.yaml")
	os.WriteFile(file, []byte("routes:\n  - match: {path: /hi}\n    respond: {status: 201, body: hi}\n"), 0o644)
	addr := startServe(t, file)
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{}}
	defer c.CloseIdleConnections()
	if code, body := fetch(t, c, "GET", "http://"+addr+"/hi", ""); code != 201 || body != "hi" {
		t.Errorf("/hi: %d %q, want the file's 201", code, body)
	}
}

// TestConfigArgsUsage: extra positional arguments, or a -config that
// names another file, fail with the usage text and status 2 on serve and
// check; serve starts nothing.
func TestConfigArgsUsage(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.yaml")
	b := filepath.Join(dir, "b.yaml")
	for _, f := range []string{a, b} {
		os.WriteFile(f, []byte("routes:\n  - match: {path: /hi}\n    respond: {status: 200}\n"), 0o644)
	}
	// A cancelled context: were serve to start anyway, it drains at once
	// instead of serving until the test times out.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, args := range [][]string{
		{a, b},
		{"-config", a, b},
		{a, "extra"},
	} {
		var stdout, stderr bytes.Buffer
		if code := runCheck(args, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "usage:") {
			t.Errorf("check %q: %d %q", args, code, stderr.String())
		}
		stderr.Reset()
		serveArgs := append([]string{"-listen", "127.0.0.1:0"}, args...)
		if code := runServe(ctx, serveArgs, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "usage:") ||
			strings.Contains(stderr.String(), "serving") {
			t.Errorf("serve %q: %d %q", serveArgs, code, stderr.String())
		}
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"check", "-config", a, a}, &stdout, &stderr); code != 0 {
		t.Errorf("the same file twice: %d %q", code, stderr.String())
	}
}
