package asm

import (
	"go/build/constraint"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBuildConstraints checks the rule that keeps assembly and pure Go
// apart: for every combination of architecture and the purego/noasm tags,
// exactly one of dispatch_amd64.go and dispatch_other.go (and of
// cpu_amd64.go and cpu_other.go) is built, and every generated *_amd64
// file is built exactly when dispatch_amd64.go is.
func TestBuildConstraints(t *testing.T) {
	expr := func(file string) constraint.Expr {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			if constraint.IsGoBuild(line) {
				e, err := constraint.Parse(line)
				if err != nil {
					t.Fatalf("%s: %v", file, err)
				}
				return e
			}
		}
		t.Fatalf("%s has no //go:build line", file)
		return nil
	}
	// built reports whether file is compiled under the given tags, with the
	// _amd64 file-name suffix implying the architecture.
	built := func(file string, tags map[string]bool) bool {
		if strings.HasSuffix(strings.TrimSuffix(strings.TrimSuffix(file, ".go"), ".s"), "_amd64") && !tags["amd64"] {
			return false
		}
		return expr(file).Eval(func(tag string) bool { return tags[tag] })
	}
	// Generated files carry avo's "DO NOT EDIT" header; the hand-written
	// *_amd64.go files must follow the same rule and are checked too.
	generated, _ := filepath.Glob("*_amd64.*")
	n := 0
	for _, g := range generated {
		if b, err := os.ReadFile(g); err == nil && strings.Contains(string(b[:min(len(b), 200)]), "DO NOT EDIT") {
			n++
		}
	}
	// Stub and assembly for each family: classify, jsonindex, lower,
	// prefixsum, scan, utf8.
	if want := 2 * 6; n != want {
		t.Fatalf("found %d generated kernel files, want %d (stub and assembly for 6 families)", n, want)
	}
	for _, arch := range []string{"amd64", "arm64", "386"} {
		for _, purego := range []bool{false, true} {
			for _, noasm := range []bool{false, true} {
				tags := map[string]bool{arch: true, "purego": purego, "noasm": noasm, "linux": true}
				asmBuilt := built("dispatch_amd64.go", tags)
				if asmBuilt == built("dispatch_other.go", tags) {
					t.Errorf("%v: dispatch_amd64.go and dispatch_other.go both built or both not", tags)
				}
				if built("cpu_amd64.go", tags) != asmBuilt || built("cpu_other.go", tags) == asmBuilt {
					t.Errorf("%v: cpu_*.go disagree with dispatch_*.go", tags)
				}
				for _, g := range generated {
					if built(g, tags) != asmBuilt {
						t.Errorf("%v: %s built=%v, dispatch_amd64.go built=%v", tags, g, built(g, tags), asmBuilt)
					}
				}
				if asmBuilt && (arch != "amd64" || purego || noasm) {
					t.Errorf("%v: assembly selected", tags)
				}
			}
		}
	}
}
