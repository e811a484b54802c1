package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestVersionStamped: `make build` puts a binary whose `version` names
// the checkout's commit and describe, and a build time, even where the
// environment sets -buildvcs=false (Go then records no revision itself).
// Before, there was no build target and version said "(devel)".
func TestVersionStamped(t *testing.T) {
	for _, tool := range []string{"make", "git", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not found: the test runs make build in a git checkout", tool)
		}
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	gitOut := func(args ...string) string {
		out, err := exec.Command("git", append([]string{"-C", root}, args...)...).Output()
		if err != nil {
			t.Skipf("git %v: %v (not a git checkout?)", args, err)
		}
		return strings.TrimSpace(string(out))
	}
	head := gitOut("rev-parse", "HEAD")
	describe := gitOut("describe", "--tags", "--always", "--dirty")
	bin := filepath.Join(t.TempDir(), "simdedge")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "make", "-s", "-C", root, "build", "BUILD_OUT="+bin)
	cmd.Env = append(os.Environ(), "GOFLAGS=-buildvcs=false")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make build: %v\n%s", err, out)
	}
	var stdout bytes.Buffer
	v := exec.Command(bin, "version")
	v.Stdout = &stdout
	if err := v.Run(); err != nil {
		t.Fatal(err)
	}
	want := regexp.MustCompile(`^simdedge ` + regexp.QuoteMeta(describe) + ` revision=` + head +
		`(-dirty)? built=\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ go\S+ \S+/\S+ simd=\S+\n$`)
	if !want.MatchString(stdout.String()) {
		t.Errorf("version: %q, want %s", stdout.String(), want)
	}
}
