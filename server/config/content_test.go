package config

import (
	"errors"
	"strings"
	"testing"
)

// TestCompressFilesKeys: the compress and files keys decode, build, print
// their defaults, and report errors with line and key.
func TestCompressFilesKeys(t *testing.T) {
	dir := t.TempDir()
	c, err := Parse([]byte("routes:\n  - match: {path_prefix: /s/}\n    files: {root: " + dir + "}\n    compress: {encodings: [br, gzip], levels: {gzip: 6}}\n  - echo: {}\n    compress: {}\n"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.WithDefaults().YAML()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"index: index.html", "min_length: 512", "encodings: [br, gzip]", "gzip: 6", "br: 4", "zstd: 3", "encodings: [zstd, gzip]", "text/*"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("defaults lack %q:\n%s", want, out)
		}
	}
	if _, err := Parse(out); err != nil {
		t.Errorf("printed defaults do not parse: %v", err)
	}
	s, err := c.Build(BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	for _, tc := range []struct {
		yaml string
		line int
		key  string
	}{
		{"routes:\n  - echo: {}\n    compress:\n      encodings: [lz4]\n", 4, "routes[0].compress"},
		{"routes:\n  - echo: {}\n    compress: {min_length: 100000}\n", 3, "routes[0].compress"},
		{"routes:\n  - echo: {}\n    compress: {levels: {gzip: 12}}\n", 3, "routes[0].compress"},
		{"routes:\n  - echo: {}\n    compress: {types: [json]}\n", 3, "routes[0].compress"},
		{"routes:\n  - echo: {}\n    compress: {speed: 1}\n", 3, "routes[0].compress.speed"},
		{"routes:\n  - files: {index: a.html}\n", 2, "routes[0].files.root"},
		{"routes:\n  - files: {root: /x}\n    echo: {}\n", 2, "routes[0]"},
	} {
		_, err := Parse([]byte(tc.yaml))
		var ce *Error
		if !errors.As(err, &ce) || ce.Line != tc.line || ce.Key != tc.key {
			t.Errorf("%q: %v; want line %d key %q", tc.yaml, err, tc.line, tc.key)
		}
	}
	c, err = Parse([]byte("routes:\n  - files: {root: " + dir + "/missing}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Build(BuildOptions{}); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("missing root: %v", err)
	}
}
