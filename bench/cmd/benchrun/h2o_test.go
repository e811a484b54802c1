package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestH2OConfig checks the generated configuration with h2o's own
// checker (h2o -t), so a key h2o 2.2.5 does not know fails here rather
// than as an empty row in a long run.
func TestH2OConfig(t *testing.T) {
	bin := lookTool("h2o")
	if bin == "" {
		t.Skip(errNoH2O)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "body.txt"), []byte(responseBody), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "h2o.conf")
	if err := os.WriteFile(path, []byte(h2oConfig(dir, 19999)), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(bin, "-t", "-c", path).CombinedOutput(); err != nil {
		t.Fatalf("h2o -t: %v\n%s", err, out)
	}
}
