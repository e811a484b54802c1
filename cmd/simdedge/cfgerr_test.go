package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckPrintsEachConfigError: `simdedge check` prints each of a
// configuration's errors on its own line with the command's prefix (the
// joined error's text had it on the first line only), one per mistake.
func TestCheckPrintsEachConfigError(t *testing.T) {
	file := filepath.Join(t.TempDir(), "bad.yaml")
	yaml := "upstreams:\n  - name: app\n    targets: [\"127.0.0.1:310810\"]\n    balanse: p2c\n" +
		"routes:\n  - match: {path_prefix: /}\n    rate_limit: {rate: five}\n    proxy: {upstream: app}\n"
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"check", file}, &stdout, &stderr); code != 1 {
		t.Fatalf("exit %d, want 1; stderr:\n%s", code, &stderr)
	}
	want := []string{
		`simdedge: config: line 3: upstreams[0].targets[0]: port 310810 is out of range (1-65535)`,
		`simdedge: config: line 4: upstreams[0].balanse: unknown key, did you mean "balance"?`,
		`simdedge: config: line 7: routes[0].rate_limit.rate: must be a number`,
	}
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
		if strings.Contains(l, "config: ") {
			got = append(got, l)
		}
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("stderr:\n%s\nwant its config lines to be:\n%s", &stderr, strings.Join(want, "\n"))
	}
}
