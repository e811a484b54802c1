package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/simdedge/simdedge/server/config"
)

// failReader fails the test if anything reads it: `url -h` must not wait
// on standard input.
type failReader struct{ t *testing.T }

func (r failReader) Read([]byte) (int, error) {
	r.t.Error("stdin read")
	return 0, io.EOF
}

// TestSubcommandHelp: every subcommand's -h (and -help) prints its usage
// and flags to stdout and exits 0, and a flag mistake prints the usage to
// stderr with status 2. Before, serve -h and check -h exited 2 with the
// flags on stderr, and url -h read stdin.
func TestSubcommandHelp(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // were serve to start anyway, it stops at once
	cmds := map[string]func(args []string, stdout, stderr io.Writer) int{
		"serve":         func(a []string, o, e io.Writer) int { return runServe(ctx, a, o, e) },
		"check":         runCheck,
		"url":           func(a []string, o, e io.Writer) int { return runURL(a, failReader{t}, o, e) },
		"version":       runVersion,
		"reload":        runReload,
		"hash-password": func(a []string, o, e io.Writer) int { return runHashPassword(a, failReader{t}, o, e) },
	}
	for name, cmd := range cmds {
		for _, h := range []string{"-h", "-help", "--help"} {
			var stdout, stderr bytes.Buffer
			if code := cmd([]string{h}, &stdout, &stderr); code != 0 || !strings.HasPrefix(stdout.String(), "usage: simdedge "+name) ||
				stderr.Len() != 0 {
				t.Errorf("%s %s: %d stdout %q stderr %q", name, h, code, stdout.String(), stderr.String())
			}
		}
		var stdout, stderr bytes.Buffer
		if code := cmd([]string{"-no-such-flag"}, &stdout, &stderr); code != 2 || stdout.Len() != 0 ||
			!strings.Contains(stderr.String(), "flag provided but not defined") || !strings.Contains(stderr.String(), "usage: simdedge "+name) {
			t.Errorf("%s -no-such-flag: %d stdout %q stderr %q", name, code, stdout.String(), stderr.String())
		}
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"-h"}, &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), "simdedge reload") ||
		!strings.Contains(stdout.String(), "hash-password") {
		t.Errorf("simdedge -h: %d %q", code, stdout.String())
	}
}

// TestRunURLPlain: plain URLs one a line (resolved against -base), JSON
// lines beside them, and URLs as arguments. Before, a plain line was an
// error.
func TestRunURLPlain(t *testing.T) {
	in := "https://EXAMPLE.com/a/../b\r\n../x\n  \n" + `{"input": "y", "base": "http://j/k/"}` + "\n{bad\n"
	var out, errOut bytes.Buffer
	if code := runURL([]string{"-base", "http://h/a/b"}, strings.NewReader(in), &out, &errOut); code != 1 ||
		!strings.Contains(errOut.String(), "line 5") {
		t.Errorf("exit %d, stderr %q: want 1 and line 5 named", code, errOut.String())
	}
	var hrefs []string
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var r urlResult
		if err := json.Unmarshal([]byte(l), &r); err != nil || r.Href == nil {
			t.Fatalf("line %q: %v", l, err)
		}
		hrefs = append(hrefs, *r.Href)
	}
	if want := []string{"https://example.com/b", "http://h/x", "http://j/k/y"}; strings.Join(hrefs, " ") != strings.Join(want, " ") {
		t.Errorf("hrefs %q, want %q", hrefs, want)
	}
	out.Reset()
	if code := runURL([]string{"http://a/%7e", "nope"}, failReader{t}, &out, &errOut); code != 0 ||
		!strings.Contains(out.String(), `"href":"http://a/%7e"`) || !strings.Contains(out.String(), `"input":"nope","base":null,"failure":true`) {
		t.Errorf("arguments: %d %q", code, out.String())
	}
}

// TestCheckVerdict: check ends with a one-line verdict on stderr, stdout
// keeps the effective configuration (-q drops it). Before, a valid file
// printed no verdict.
func TestCheckVerdict(t *testing.T) {
	file := filepath.Join(t.TempDir(), "c.yaml")
	writeFile(t, file, "listen: \"127.0.0.1:9\"\nupstreams:\n  - {name: api, targets: [\"127.0.0.1:1\"]}\n"+
		"routes:\n  - match: {path: /a}\n    proxy: {upstream: api}\n  - match: {path: /b}\n    respond: {status: 204}\n")
	var stdout, stderr bytes.Buffer
	if code := runCheck([]string{file}, &stdout, &stderr); code != 0 ||
		stderr.String() != "simdedge check: "+file+" is valid (1 listener, 2 routes, 1 upstream)\n" ||
		!strings.Contains(stdout.String(), "127.0.0.1:9") {
		t.Errorf("check: %d stdout %q stderr %q", code, stdout.String(), stderr.String())
	}
	if _, err := config.Parse(stdout.Bytes()); err != nil {
		t.Errorf("stdout is not a configuration: %v", err)
	}
	stdout.Reset()
	stderr.Reset()
	if code := runCheck([]string{"-q", file}, &stdout, &stderr); code != 0 || stdout.Len() != 0 || !strings.Contains(stderr.String(), "is valid") {
		t.Errorf("check -q: %d stdout %q stderr %q", code, stdout.String(), stderr.String())
	}
	stderr.Reset()
	if code := runCheck(nil, io.Discard, &stderr); code != 0 || !strings.HasPrefix(stderr.String(), "simdedge check: (built-in) is valid (1 listener, ") {
		t.Errorf("check built-in: %d %q", code, stderr.String())
	}
}

// TestOverrideListen: -listen replaces the address of the configuration's
// one tcp listener, wherever it is written, keeping its settings; several
// tcp listeners are an error; with none it adds a plain one.
func TestOverrideListen(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		want       []string // EffectiveListeners' addresses after -listen 127.0.0.1:7
		err        bool
	}{
		{"default", "routes: [{respond: {status: 200}}]\n", []string{"127.0.0.1:7"}, false},
		{"listen", "listen: \"127.0.0.1:5\"\nroutes: [{respond: {status: 200}}]\n", []string{"127.0.0.1:7"}, false},
		{"one entry", "listeners: [{address: \"127.0.0.1:5\", loops: 2}]\nroutes: [{respond: {status: 200}}]\n", []string{"127.0.0.1:7"}, false},
		{"two entries", "listeners: [{address: \"127.0.0.1:5\"}, {address: \"127.0.0.1:6\"}]\nroutes: [{respond: {status: 200}}]\n", nil, true},
		{"listen and entry", "listen: \"127.0.0.1:5\"\nlisteners: [{address: \"127.0.0.1:6\"}]\nroutes: [{respond: {status: 200}}]\n", nil, true},
	} {
		cfg, err := config.Parse([]byte(tc.yaml))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		err = overrideListen(cfg, "127.0.0.1:7")
		if (err != nil) != tc.err {
			t.Errorf("%s: err %v", tc.name, err)
			continue
		}
		if err != nil {
			continue
		}
		var got []string
		for _, l := range cfg.EffectiveListeners() {
			got = append(got, l.Address)
			if tc.name == "one entry" && l.Loops != 2 {
				t.Errorf("%s: loops %d, want the entry's 2 kept", tc.name, l.Loops)
			}
		}
		if strings.Join(got, ",") != strings.Join(tc.want, ",") {
			t.Errorf("%s: listeners %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestServeListenReplaces: serve -listen on a configuration whose one
// listener is in `listeners` serves only on the -listen address. Before,
// it served the configured address too.
func TestServeListenReplaces(t *testing.T) {
	configured := freeAddr(t)
	file := filepath.Join(t.TempDir(), "c.yaml")
	writeFile(t, file, "listeners:\n  - address: \""+configured+"\"\n"+routeV("x"))
	addrs := startServeAll(t, "-config", file, "-listen", "127.0.0.1:0")
	if len(addrs) != 1 || addrs[0] == configured {
		t.Errorf("listening on %v; want one address, not the configured %s", addrs, configured)
	}
	two := filepath.Join(t.TempDir(), "two.yaml")
	writeFile(t, two, "listeners:\n  - address: \"127.0.0.1:0\"\n  - address: \"127.0.0.1:0\"\n"+routeV("x"))
	// A cancelled context: were serve to start anyway, it drains at once.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var stderr bytes.Buffer
	if code := runServe(ctx, []string{"-listen", "127.0.0.1:0", two}, io.Discard, &stderr); code != 1 ||
		!strings.Contains(stderr.String(), "several tcp listeners") {
		t.Errorf("two listeners: %d %q", code, stderr.String())
	}
}
