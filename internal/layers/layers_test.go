package layers

import (
	"go/build"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

const module = "github.com/simdedge/simdedge"

// allowed lists, for each layer (a path prefix inside the module), the
// project packages it may import; the first layer that matches applies.
// The parsers form a chain: parse/url stands alone on asm, parse/http may
// resolve targets with parse/url, and parse/json (request envelopes, form
// bodies) may use both.
var allowed = []struct {
	layer string
	may   []string
}{
	{"asm", nil},
	{"internal", nil},
	{"parse/url", []string{"asm", "internal"}},
	{"parse/http", []string{"asm", "internal", "parse/url"}},
	{"parse/json", []string{"asm", "internal", "parse/url", "parse/http"}},
	// The counters import nothing of the project (the policy packages
	// may count with them).
	{"server/metrics", nil},
	// The upstream policy package is called by every engine and must not
	// depend on any of them (it sits before "server": the first match
	// wins); it keeps its targets' latency in a metrics histogram.
	{"server/upstream", []string{"asm", "internal", "parse", "server/metrics"}},
	// Likewise the route policies (templates, path and header rewrites).
	{"server/rewrite", []string{"asm", "internal", "parse"}},
	{"server", []string{"asm", "internal", "parse"}},
	{"xdp", []string{"asm", "internal", "parse", "server"}},
	{"rdma", []string{"asm", "internal", "parse", "server"}},
	{"cmd", []string{"asm", "internal", "parse", "server", "xdp", "rdma"}},
	// packaging has only tests (of the packaging files): testenv, and
	// server/config to load the default configuration.
	{"packaging", []string{"internal", "server"}},
}

// foreign are modules that must never be required by the main module:
// benchmark peers and the assembly generator live in their own modules.
var foreign = []string{"github.com/valyala/fasthttp", "github.com/nlnwa/whatwg-url", "github.com/valyala/fastjson",
	"github.com/bytedance/sonic", "github.com/mmcloughlin/avo", "github.com/goccy/go-json"}

func root(t *testing.T) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func under(path, prefix string) bool { return path == prefix || strings.HasPrefix(path, prefix+"/") }

func TestImportRules(t *testing.T) {
	dir := root(t)
	checked := 0
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		name := d.Name()
		// Other modules (bench, fuzz, acmetest, interop: a go.mod of
		// their own), generators and test data are not part of the main
		// module's packages.
		if rel != "." && (strings.HasPrefix(name, "_") || strings.HasPrefix(name, ".") || name == "testdata" ||
			fileExists(filepath.Join(p, "go.mod"))) {
			return filepath.SkipDir
		}
		ctx := build.Default
		ctx.UseAllFiles = true // every file, whatever its build tags or OS
		pkg, err := ctx.ImportDir(p, build.ImportComment)
		if err != nil {
			return nil // no Go files here
		}
		imports := append(append(pkg.Imports, pkg.TestImports...), pkg.XTestImports...)
		for _, imp := range imports {
			if !under(imp, module) {
				continue
			}
			target := strings.TrimPrefix(strings.TrimPrefix(imp, module), "/")
			if under(target, rel) {
				continue // a package may import its own subpackages
			}
			if !mayImport(rel, target) {
				t.Errorf("%s imports %s, which its layer may not", rel, target)
			}
		}
		checked++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 5 {
		t.Fatalf("checked only %d packages; is the walk broken?", checked)
	}
}

func mayImport(from, to string) bool {
	if under(to, "cmd") {
		return false
	}
	for _, a := range allowed {
		if under(from, a.layer) {
			if under(to, a.layer) {
				return true // packages of one layer may use each other
			}
			for _, m := range a.may {
				if under(to, m) {
					return true
				}
			}
			return false
		}
	}
	return false
}

func TestNoForeignRequirements(t *testing.T) {
	gomod, err := os.ReadFile(filepath.Join(root(t), "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range foreign {
		if strings.Contains(string(gomod), f+" ") {
			t.Errorf("main go.mod requires %s; benchmark peers and generators belong in their own modules", f)
		}
	}
}
