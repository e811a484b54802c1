package main

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// unreloadableCall finds the keys cmd/simdedge refuses to reload:
// unreloadable("admin.address", ...) and, for a listener's keys,
// unreloadable(key+".engine", ...).
var unreloadableCall = regexp.MustCompile(`unreloadable\((key\s*\+\s*)?"([a-z_.0-9]+)"`)

// reloadExempt: keys refused in part, with the reason.
var reloadExempt = map[string]string{
	"listeners[].tls": "turning TLS on or off is refused; its files and options reload",
}

// TestReloadColumn: every key cmd/simdedge refuses to reload is shown as
// such in the reference (the reverse, that every key shown as reloadable
// is applied, is the reload tests' job).
func TestReloadColumn(t *testing.T) {
	es, err := entries()
	if err != nil {
		t.Fatal(err)
	}
	byPath := map[string]entry{}
	for _, e := range es {
		byPath[e.Path] = e
	}
	files, _ := filepath.Glob(filepath.Join(repoRoot, "cmd", "simdedge", "*.go"))
	found := 0
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range unreloadableCall.FindAllSubmatch(src, -1) {
			path := string(m[2])
			if len(m[1]) > 0 {
				path = "listeners[]" + path
			}
			found++
			e, ok := byPath[path]
			switch {
			case reloadExempt[path] != "":
			case !ok:
				t.Errorf("%s refuses to reload %s, which the reference does not have", filepath.Base(f), path)
			case e.Reload == reloadYes:
				t.Errorf("%s refuses to reload %s; the reference says a reload applies it", filepath.Base(f), path)
			}
		}
	}
	if found == 0 {
		t.Fatal("no unreloadable(...) call found in cmd/simdedge: the pattern is out of date")
	}
}
