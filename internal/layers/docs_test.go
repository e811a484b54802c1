package layers

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// ARCHITECTURE.md is a map of the code; these tests keep it from drifting.
// Every file it names in backquotes exists, every Go name exists as a
// declaration, every relative link resolves, and its layer table is the
// rules table above, row for row.

// notGo are words the map puts in backquotes that name no file and no Go
// declaration: build tags and the like.
var notGo = map[string]bool{
	"simdedgedebug": true,
}

// decls holds every name declared in the repository's Go files (every
// module, test files included, whatever their build tags): bare names,
// and "Type.Member" (methods, struct fields, interface methods) and
// "pkg.Name" (top-level names by package name).
type decls struct {
	bare      map[string]bool
	qualified map[string]bool
	files     map[string]bool // base names of every file in the repository
}

func collectDecls(t *testing.T) decls {
	dir := root(t)
	d := decls{bare: map[string]bool{}, qualified: map[string]bool{}, files: map[string]bool{}}
	fset := token.NewFileSet()
	err := filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() {
			if n := e.Name(); p != dir && (n == ".git" || n == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		d.files[e.Name()] = true
		if !strings.HasSuffix(p, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil // not ours to judge here; go vet does
		}
		d.file(f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.bare) < 1000 {
		t.Fatalf("found only %d declarations; is the walk broken?", len(d.bare))
	}
	return d
}

func (d *decls) add(qual, name string) {
	d.bare[name] = true
	if qual != "" {
		d.qualified[qual+"."+name] = true
	}
}

func (d *decls) file(f *ast.File) {
	pkg := f.Name.Name
	for _, decl := range f.Decls {
		switch decl := decl.(type) {
		case *ast.FuncDecl:
			if decl.Recv == nil || len(decl.Recv.List) == 0 {
				d.add(pkg, decl.Name.Name)
				continue
			}
			d.add(recvName(decl.Recv.List[0].Type), decl.Name.Name)
		case *ast.GenDecl:
			for _, spec := range decl.Specs {
				switch spec := spec.(type) {
				case *ast.TypeSpec:
					d.add(pkg, spec.Name.Name)
					d.members(spec.Name.Name, spec.Type)
				case *ast.ValueSpec:
					for _, n := range spec.Names {
						d.add(pkg, n.Name)
					}
				}
			}
		}
	}
}

// members records a type's fields and interface methods.
func (d *decls) members(typ string, x ast.Expr) {
	var fields *ast.FieldList
	switch x := x.(type) {
	case *ast.StructType:
		fields = x.Fields
	case *ast.InterfaceType:
		fields = x.Methods
	}
	if fields == nil {
		return
	}
	for _, f := range fields.List {
		for _, n := range f.Names {
			d.add(typ, n.Name)
		}
	}
}

func recvName(x ast.Expr) string {
	switch x := x.(type) {
	case *ast.StarExpr:
		return recvName(x.X)
	case *ast.IndexExpr:
		return recvName(x.X)
	case *ast.IndexListExpr:
		return recvName(x.X)
	case *ast.Ident:
		return x.Name
	}
	return ""
}

var (
	codeSpan  = regexp.MustCompile("`([^`\n]+)`")
	mdLink    = regexp.MustCompile(`\]\(([^)#\s]+)[^)]*\)`)
	goName    = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9]*(\.[A-Za-z][A-Za-z0-9]*)*$`)
	fileName  = regexp.MustCompile(`^[A-Za-z0-9_./*-]+\.(go|c|h|md|sh|yaml|json)$`)
	pathLike  = regexp.MustCompile(`^[a-z0-9_]+(/[A-Za-z0-9_.-]+)+/?$`)
	wildcards = regexp.MustCompile(`\*`)
)

func architecture(t *testing.T) string {
	b, err := os.ReadFile(filepath.Join(root(t), "ARCHITECTURE.md"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// checkSpan reports what is wrong with one backquoted span of the map, or
// "" when it names something that exists (or is not a name at all).
func checkSpan(d decls, dir, s string) string {
	s = strings.TrimSuffix(s, "()")
	switch {
	case notGo[s]:
		return ""
	case fileName.MatchString(s):
		if strings.Contains(s, "/") {
			m, _ := filepath.Glob(filepath.Join(dir, filepath.FromSlash(s)))
			if len(m) == 0 {
				return "no such file"
			}
			return ""
		}
		if wildcards.MatchString(s) {
			return "" // a pattern such as h2*.go; its files are named elsewhere
		}
		if !d.files[s] {
			return "no file of that name"
		}
		return ""
	case pathLike.MatchString(s):
		p := strings.TrimSuffix(strings.TrimSuffix(s, "/..."), "/")
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(p))); err != nil {
			return "no such path"
		}
		return ""
	case goName.MatchString(s):
		parts := strings.Split(s, ".")
		switch len(parts) {
		case 1:
			if !d.bare[s] {
				return "no declaration of that name"
			}
		case 2:
			if !d.qualified[s] {
				return "no such member or package-level name"
			}
		default:
			// pkg.Type.Member
			n := len(parts)
			if !d.qualified[parts[n-2]+"."+parts[n-1]] || !d.qualified[parts[n-3]+"."+parts[n-2]] {
				return "no such member"
			}
		}
	}
	return ""
}

// TestArchitectureNames checks that every file, Go name and relative link
// in ARCHITECTURE.md exists, so that the map follows the code.
func TestArchitectureNames(t *testing.T) {
	d := collectDecls(t)
	dir := root(t)
	doc := architecture(t)
	checked := 0
	for _, m := range codeSpan.FindAllStringSubmatch(doc, -1) {
		checked++
		if why := checkSpan(d, dir, m[1]); why != "" {
			t.Errorf("ARCHITECTURE.md names `%s`: %s", m[1], why)
		}
	}
	for _, m := range mdLink.FindAllStringSubmatch(doc, -1) {
		if strings.Contains(m[1], "://") {
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(m[1]))); err != nil {
			t.Errorf("ARCHITECTURE.md links to %s, which does not exist", m[1])
		}
	}
	if checked < 200 {
		t.Errorf("checked only %d names; is the pattern broken?", checked)
	}
}

// TestArchitectureChecksBite feeds the checks names that do not exist.
func TestArchitectureChecksBite(t *testing.T) {
	d := collectDecls(t)
	dir := root(t)
	for _, s := range []string{"conn.serveTwice", "serveTwice", "nosuchfile.go", "server/nosuch.go", "server/nosuchpkg",
		"Attempt.NoSuchStep", "proxy.Proxy.NoSuch"} {
		if checkSpan(d, dir, s) == "" {
			t.Errorf("`%s` passed the check", s)
		}
	}
	for _, s := range []string{"conn.serve", "Request.parseHead", "attempt.go", "server/upstream/attempt.go",
		"server/upstream", "proxy.Proxy.LoopProxy", "Attempt.Next", "simdedgedebug", "engine: loop"} {
		if why := checkSpan(d, dir, s); why != "" {
			t.Errorf("`%s` failed the check: %s", s, why)
		}
	}
}

// TestArchitectureLayerTable checks that the layer table of ARCHITECTURE.md
// is the rules table, row for row, in order.
func TestArchitectureLayerTable(t *testing.T) {
	doc := architecture(t)
	start := strings.Index(doc, "<!-- layer table")
	end := strings.Index(doc, "<!-- end of layer table -->")
	if start < 0 || end < start {
		t.Fatal("ARCHITECTURE.md has no layer table between its markers")
	}
	var rows [][3][]string
	for _, line := range strings.Split(doc[start:end], "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue // the comment, the header and its rule
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if len(cells) != 3 {
			t.Fatalf("layer table row %q has %d cells, want 3", line, len(cells))
		}
		var row [3][]string
		for i, c := range cells {
			for _, m := range codeSpan.FindAllStringSubmatch(c, -1) {
				row[i] = append(row[i], m[1])
			}
		}
		rows = append(rows, row)
	}
	if len(rows) != len(rules) {
		t.Errorf("ARCHITECTURE.md's layer table has %d rows, the rules %d", len(rows), len(rules))
	}
	for i := range min(len(rows), len(rules)) {
		r, row := rules[i], rows[i]
		if len(row[0]) != 1 || row[0][0] != r.pkg {
			t.Errorf("layer table row %d is %v, the rule %s", i+1, row[0], r.pkg)
			continue
		}
		if !sameSet(row[1], r.may) {
			t.Errorf("layer table: %s may import %v, the rule says %v", r.pkg, row[1], r.may)
		}
		if !sameSet(row[2], r.tests) {
			t.Errorf("layer table: %s's tests may add %v, the rule says %v", r.pkg, row[2], r.tests)
		}
	}
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// TestDecisionLinks checks that the relative links of docs/decisions (to
// one another, to bench/results and to the map) resolve.
func TestDecisionLinks(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(root(t), "docs", "decisions", "*.md"))
	if err != nil || len(files) < 2 {
		t.Fatalf("docs/decisions: %d files, %v", len(files), err)
	}
	for _, f := range files {
		for _, why := range brokenLinks(t, f, false) {
			t.Error(why)
		}
	}
}

// frontDoor are the operator's pages: the README, the guide, the status
// page and the benchmark README. Their links, anchors included, resolve.
var frontDoor = []string{"README.md", "docs/guide*.md", "docs/status.md", "bench/README.md"}

// landing are links to what another branch of the same issue adds
// (packaging/: issue 29's packaging, branch i29-pkg), allowed to be
// missing until it lands and checked like any other link once it has.
var landing = map[string]bool{"packaging/": true}

// TestFrontDoorLinks checks the relative links of the operator's pages,
// and that each #anchor names a heading or an <a id> of its page.
func TestFrontDoorLinks(t *testing.T) {
	n := 0
	for _, pat := range frontDoor {
		files, err := filepath.Glob(filepath.Join(root(t), filepath.FromSlash(pat)))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: no files (%v)", pat, err)
		}
		for _, f := range files {
			n++
			for _, why := range brokenLinks(t, f, true) {
				t.Error(why)
			}
		}
	}
	if n < 5 {
		t.Errorf("checked %d pages; is the guide missing?", n)
	}
}

// TestFrontDoorLinksBite feeds the link check a page with a missing file,
// a missing anchor and a good link of each kind.
func TestFrontDoorLinksBite(t *testing.T) {
	dir := t.TempDir()
	page := filepath.Join(dir, "page.md")
	doc := "# Page\n\n## The server's own log\n\n<a id=\"limits.max_conns\"></a>\n\n" +
		"[a](#the-servers-own-log) [b](#limits.max_conns) [c](page.md#page) [d](https://example.com/x)\n" +
		"[e](nosuch.md) [f](#no-such-heading) [g](page.md#nor-this)\n"
	if err := os.WriteFile(page, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := brokenLinks(t, page, true)
	if len(bad) != 3 {
		t.Errorf("found %d broken links, want 3 (e, f, g): %q", len(bad), bad)
	}
	for _, w := range []string{"nosuch.md", "#no-such-heading", "page.md#nor-this"} {
		if !slices.ContainsFunc(bad, func(s string) bool { return strings.Contains(s, w) }) {
			t.Errorf("%s was not reported", w)
		}
	}
}

var (
	anyLink   = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	anchorTag = regexp.MustCompile(`<a id="([^"]+)"`)
	heading   = regexp.MustCompile(`(?m)^#{1,6} (.+)$`)
)

// brokenLinks returns the relative links of the Markdown file f that do
// not resolve; with anchors, also the #fragments that name no heading or
// <a id> of the page they point into. Fenced code is not read.
func brokenLinks(t *testing.T, f string, anchors bool) []string {
	t.Helper()
	b, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	name, _ := filepath.Rel(root(t), f)
	var bad []string
	for _, m := range anyLink.FindAllStringSubmatch(outsideFences(string(b)), -1) {
		target := m[1]
		if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
			continue
		}
		file, frag, _ := strings.Cut(target, "#")
		path := f
		if file != "" {
			path = filepath.Join(filepath.Dir(f), filepath.FromSlash(file))
			if _, err := os.Stat(path); err != nil {
				if anchors && landing[target] {
					t.Logf("%s links to %s, which has not landed yet", name, target)
					continue
				}
				bad = append(bad, name+" links to "+target+", which does not exist")
				continue
			}
		}
		if !anchors || frag == "" {
			continue
		}
		page, err := os.ReadFile(path)
		if err != nil {
			bad = append(bad, name+" links to "+target+", not a page")
			continue
		}
		if !slices.Contains(pageAnchors(string(page)), frag) {
			bad = append(bad, name+" links to "+target+", whose page has no such anchor")
		}
	}
	return bad
}

// outsideFences blanks fenced code blocks, whose brackets are not links.
func outsideFences(doc string) string {
	lines := strings.Split(doc, "\n")
	in := false
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			in = !in
			lines[i] = ""
		} else if in {
			lines[i] = ""
		}
	}
	return strings.Join(lines, "\n")
}

// pageAnchors lists a page's <a id>s and its headings' anchors as GitHub
// makes them: lower case, punctuation other than '-' and '_' dropped,
// spaces made '-', and a repeated one suffixed -1, -2...
func pageAnchors(doc string) []string {
	var out []string
	for _, m := range anchorTag.FindAllStringSubmatch(doc, -1) {
		out = append(out, m[1])
	}
	seen := map[string]int{}
	for _, m := range heading.FindAllStringSubmatch(outsideFences(doc), -1) {
		var b strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(m[1])) {
			switch {
			case r == ' ':
				b.WriteByte('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		slug := b.String()
		if k := seen[slug]; k > 0 {
			out = append(out, slug+"-"+strconv.Itoa(k))
		} else {
			out = append(out, slug)
		}
		seen[slug]++
	}
	return out
}
