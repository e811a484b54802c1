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

// A rule says which project packages one package may import. A path ending
// in "/..." names that directory and everything under it; any other path
// names exactly one package. The first rule that matches a package applies.
// Packages under a "/..." rule may also import each other; a package under
// server/ must have a rule of its own (TestEveryServerPackageHasARow), so
// that each edge between server's packages is written down here.
type rule struct {
	pkg   string
	may   []string // what its non-test files may import
	tests []string // what its test files may import besides
}

// below is what every package under server/ may import: the kernels, the
// parsers and the module's internal plumbing. The rows below list only the
// edges between server's own packages.
var below = []string{"asm/...", "internal/...", "parse/..."}

// rules is the layer table of ARCHITECTURE.md ("Layers"), row for row, in
// order: TestArchitectureLayerTable fails when the two differ.
var rules = []rule{
	{pkg: "asm/..."},
	{pkg: "internal/..."},
	// The parsers form a chain: parse/url stands alone on asm, parse/http
	// may resolve targets with parse/url, and parse/json (request
	// envelopes, form bodies) may use both.
	{pkg: "parse/url/...", may: []string{"asm/...", "internal/..."}},
	{pkg: "parse/http/...", may: []string{"asm/...", "internal/...", "parse/url/..."}},
	{pkg: "parse/json/...", may: []string{"asm/...", "internal/...", "parse/url/...", "parse/http/..."}},

	// The leaves below server: policy and plumbing that every engine
	// calls and that never import server. edgetls and edgeacme in
	// particular stay free of the core, so that certificates can be
	// managed by a program that serves nothing.
	{pkg: "server/metrics"},
	{pkg: "server/trace"},
	{pkg: "server/proxyproto"},
	{pkg: "server/accesslog"},
	{pkg: "server/ratelimit"},
	{pkg: "server/access"},
	{pkg: "server/rewrite"},
	{pkg: "server/pathnorm"},
	{pkg: "server/edgetls"},
	{pkg: "server/edgeacme"},
	{pkg: "server/upstream", may: []string{"server/metrics"}},
	// Service discovery: resolves targets for the pools (DNS I/O of its
	// own, which server/upstream never does).
	{pkg: "server/upstream/discover", may: []string{"server/upstream"}},
	// The global rate limit's client (Envoy's protocol; gRPC with -tags
	// fleet); descriptors are templates.
	{pkg: "server/ratelimit/rls", may: []string{"server/rewrite"}},
	// The admin listener reads the counters and the pools; its tests
	// build a configuration to check what it shows of one.
	{pkg: "server/admin", may: []string{"server/accesslog", "server/metrics", "server/upstream"},
		tests: []string{"server/config"}},
	{pkg: "server/internal/rbuf"},
	{pkg: "server/internal/enginetest"},
	{pkg: "server/internal/faultsrv"},
	{pkg: "server/internal/memnet"},
	// The loop's hand-off count, read by tests of any package.
	{pkg: "server/internal/loopstat"},

	// The core: connections, Request, ResponseWriter, the loop, HTTP/2
	// and messages.
	{pkg: "server",
		may: []string{"server/access", "server/accesslog", "server/internal/loopstat", "server/internal/rbuf",
			"server/metrics", "server/pathnorm", "server/proxyproto", "server/trace", "server/upstream"},
		// Its internal tests use memnet; its examples, servertest.
		tests: []string{"server/edgetls", "server/internal/enginetest", "server/internal/memnet", "server/servertest"}},

	// Above the core: handlers and wiring built on server.
	{pkg: "server/stdhttp", may: []string{"server"},
		tests: []string{"server/internal/enginetest", "server/internal/servetest"}},
	{pkg: "server/servertest", may: []string{"server", "server/internal/memnet"}},
	// Starts a server on a loopback listener for the tests of the
	// packages above server (server's own tests use internal/testnet).
	{pkg: "server/internal/servetest", may: []string{"server"}},
	{pkg: "server/compress", may: []string{"server"}},
	{pkg: "server/files", may: []string{"server"},
		tests: []string{"server/compress", "server/router", "server/internal/enginetest", "server/internal/servetest", "server/servertest"}},
	{pkg: "server/router",
		may: []string{"server", "server/access", "server/metrics", "server/pathnorm", "server/ratelimit", "server/rewrite"},
		// Its tests count lookups on a proxy route too.
		tests: []string{"server/internal/enginetest", "server/internal/servetest", "server/proxy", "server/servertest"}},
	{pkg: "server/proxy",
		may: []string{"server", "server/internal/rbuf", "server/pathnorm", "server/proxyproto", "server/trace", "server/upstream"},
		// The proxy's tests run it behind the router and its policies,
		// as a configuration would.
		tests: []string{"server/access", "server/accesslog", "server/compress", "server/edgetls",
			"server/internal/enginetest", "server/internal/faultsrv", "server/internal/loopstat", "server/internal/servetest",
			"server/metrics", "server/ratelimit",
			"server/rewrite", "server/router", "server/servertest"}},
	{pkg: "server/config",
		may: []string{"server", "server/access", "server/accesslog", "server/compress", "server/edgetls",
			"server/files", "server/metrics", "server/pathnorm", "server/proxy", "server/ratelimit", "server/ratelimit/rls",
			"server/rewrite", "server/router", "server/upstream", "server/upstream/discover", "server/config/internal/keyhook"}},
	{pkg: "server/config/internal/keyhook"},
	// The generator of the configuration reference, docs/config.md.
	{pkg: "server/config/internal/gendoc", may: []string{"server/config", "server/config/internal/keyhook"}},
	{pkg: "server/xds", may: []string{"server/config"}},

	// The transports implement server's interfaces; cmd wires everything.
	{pkg: "xdp/...", may: []string{"asm/...", "internal/...", "parse/...", "server/..."}},
	{pkg: "rdma/...", may: []string{"asm/...", "internal/...", "parse/...", "server/..."}},
	{pkg: "cmd/...", may: []string{"asm/...", "internal/...", "parse/...", "server/...", "xdp/...", "rdma/..."}},
	// Only tests, of the packaging files: they load the default
	// configuration.
	{pkg: "packaging/...", tests: []string{"internal/...", "server/config"}},
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

// matches reports whether pkg is named by pattern (see rule).
func matches(pattern, pkg string) bool {
	if tree, ok := strings.CutSuffix(pattern, "/..."); ok {
		return under(pkg, tree)
	}
	return pkg == pattern
}

func ruleFor(pkg string) *rule {
	for i := range rules {
		if matches(rules[i].pkg, pkg) {
			return &rules[i]
		}
	}
	return nil
}

// mayImport reports whether from may import to; test says whether the
// import comes from a test file.
func mayImport(from, to string, test bool) bool {
	if from == to {
		return true // a package's external tests import it
	}
	if under(to, "cmd") && !under(from, "cmd") {
		return false // nothing imports cmd
	}
	r := ruleFor(from)
	if r == nil {
		return false
	}
	if tree, ok := strings.CutSuffix(r.pkg, "/..."); ok && under(to, tree) {
		return true // packages of one tree may use each other
	}
	var may []string
	if under(from, "server") {
		may = append(may, below...)
	}
	may = append(may, r.may...)
	if test {
		may = append(may, r.tests...)
	}
	for _, m := range may {
		if matches(m, to) {
			return true
		}
	}
	return false
}

// packages returns the module's packages (directory relative to the root)
// with their project imports: code for non-test files, tests for the rest.
func packages(t *testing.T) map[string][2][]string {
	dir := root(t)
	out := make(map[string][2][]string)
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
		out[rel] = [2][]string{project(pkg.Imports), project(append(append([]string(nil), pkg.TestImports...), pkg.XTestImports...))}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) < 5 {
		t.Fatalf("found only %d packages; is the walk broken?", len(out))
	}
	return out
}

func project(imports []string) []string {
	var out []string
	for _, imp := range imports {
		if under(imp, module) {
			out = append(out, strings.TrimPrefix(strings.TrimPrefix(imp, module), "/"))
		}
	}
	return out
}

func TestImportRules(t *testing.T) {
	for rel, imps := range packages(t) {
		for i, list := range imps {
			for _, to := range list {
				if !mayImport(rel, to, i == 1) {
					t.Errorf("%s imports %s, which its row in the layer table does not allow", rel, to)
				}
			}
		}
	}
}

// TestEveryServerPackageHasARow keeps the table complete: a new package
// under server/ gets a row, and so a place in ARCHITECTURE.md's table.
func TestEveryServerPackageHasARow(t *testing.T) {
	for rel := range packages(t) {
		if !under(rel, "server") {
			continue
		}
		if r := ruleFor(rel); r == nil || r.pkg != rel {
			t.Errorf("%s has no row of its own in the layer table", rel)
		}
	}
}

// TestRulesBite checks the rules on edges that must stay forbidden, so
// that a loosened table cannot pass unnoticed.
func TestRulesBite(t *testing.T) {
	forbidden := [][2]string{
		{"server/edgetls", "server"},
		{"server/edgeacme", "server"},
		{"server/upstream", "server"},
		{"server/metrics", "server"},
		{"server", "server/router"},
		{"server", "server/proxy"},
		{"server", "server/stdhttp"},
		{"parse/http", "server"},
		{"parse/url", "parse/http"},
		{"asm", "parse/url"},
		{"server/proxy", "cmd/simdedge"},
	}
	for _, e := range forbidden {
		if mayImport(e[0], e[1], true) {
			t.Errorf("the table lets %s import %s", e[0], e[1])
		}
	}
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
