package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/simdedge/simdedge/server/config"
	"go.yaml.in/yaml/v3"
)

// repoRoot is the repository root, from this package's directory.
const repoRoot = "../../../.."

// TestGeneratedFilesUpToDate fails when docs/config.md or
// docs/simdedge.schema.json is not what gendoc writes now: a key was
// added, renamed or documented without regenerating.
func TestGeneratedFilesUpToDate(t *testing.T) {
	md, schema, err := generate()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct {
		name string
		want []byte
	}{{referenceFile, md}, {schemaFile, schema}} {
		got, err := os.ReadFile(filepath.Join(repoRoot, f.name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, f.want) {
			t.Errorf("%s is stale: run `go run ./server/config/internal/gendoc` (or make generate) and commit it", f.name)
		}
	}
}

// TestWalkRefuses: a field the walk cannot name or write is an error,
// not a silent gap in the reference.
func TestWalkRefuses(t *testing.T) {
	type untagged struct{ Listen string }
	type unknownType struct {
		D interface{ M() } `yaml:"d"`
	}
	for _, typ := range []reflect.Type{reflect.TypeFor[untagged](), reflect.TypeFor[unknownType]()} {
		if _, err := walk(typ); err == nil {
			t.Errorf("walk(%s) succeeded", typ)
		}
	}
}

// TestEntriesRefuseGaps: a key without an entry and an entry without a
// key both fail the generator.
func TestEntriesRefuseGaps(t *testing.T) {
	saved := routeDocs
	defer func() { routeDocs = saved }()
	routeDocs = map[string]doc{}
	for k, d := range saved {
		routeDocs[k] = d
	}
	delete(routeDocs, "routes[].match.host")
	routeDocs["routes[].match.hots"] = doc{Text: "typo"}
	_, err := entries()
	if err == nil || !strings.Contains(err.Error(), "routes[].match.host has no entry") || !strings.Contains(err.Error(), "routes[].match.hots, which the config types do not have") {
		t.Fatalf("entries() = %v, want both gaps reported", err)
	}
}

// baseRoutes is added to an example that has no routes of its own (a
// configuration needs one).
const baseRoutes = "routes:\n  - respond: {status: 200}\n"

// exampleConfig is a table example as a whole configuration.
func exampleConfig(ex string) string {
	var top map[string]any
	if yaml.Unmarshal([]byte(ex), &top) == nil && top["routes"] != nil {
		return ex
	}
	return ex + baseRoutes
}

// TestExamplesLoad: every example in the reference loads (config.Parse)
// and passes the schema.
func TestExamplesLoad(t *testing.T) {
	es, err := entries()
	if err != nil {
		t.Fatal(err)
	}
	schema := loadSchema(t)
	for _, e := range es {
		if e.Doc.Example == "" {
			continue
		}
		src := exampleConfig(e.Doc.Example)
		if _, err := config.Parse([]byte(src)); err != nil {
			t.Errorf("example of %s does not load:\n%s\n%v", e.Path, src, err)
		}
		for _, err := range validateYAML(t, schema, []byte(src)) {
			t.Errorf("example of %s: schema: %v", e.Path, err)
		}
	}
}

// TestExamplesCoverEveryKey: every key appears in at least one example,
// so every key is shown in a configuration that loads (and so is a key
// the decoder accepts).
func TestExamplesCoverEveryKey(t *testing.T) {
	es, err := entries()
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]kind{}
	for _, e := range es {
		kinds[e.Path] = e.Kind
	}
	seen := map[string]bool{}
	for _, e := range es {
		if e.Doc.Example == "" {
			continue
		}
		var doc any
		if err := yaml.Unmarshal([]byte(e.Doc.Example), &doc); err != nil {
			t.Fatalf("example of %s: %v", e.Path, err)
		}
		collect(doc, "", kinds, seen)
	}
	for _, e := range es {
		if !seen[e.Path] {
			t.Errorf("%s appears in no example", e.Path)
		}
	}
}

// collect records the key paths of a YAML document, down to the keys the
// reference describes.
func collect(doc any, context string, kinds map[string]kind, seen map[string]bool) {
	switch v := doc.(type) {
	case map[string]any:
		for k, x := range v {
			path := k
			if context != "" {
				path = context + "." + k
			}
			kd, ok := kinds[path]
			if !ok {
				continue
			}
			seen[path] = true
			switch kd {
			case kSection:
				collect(x, path, kinds, seen)
			case kList, kTargets:
				if l, ok := x.([]any); ok {
					for _, e := range l {
						collect(e, path+"[]", kinds, seen)
					}
				}
			}
		}
	}
}

func loadSchema(t *testing.T) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, schemaFile))
	if err != nil {
		t.Fatal(err)
	}
	var s map[string]any
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("%s: %v", schemaFile, err)
	}
	return s
}

func validateYAML(t *testing.T, schema map[string]any, src []byte) []error {
	t.Helper()
	var doc any
	if err := yaml.Unmarshal(src, &doc); err != nil {
		t.Fatal(err)
	}
	return validate(schema, doc, "$")
}

// TestSchemaValidatesConfigs: the embedded default configuration and
// every file of examples/ pass the schema.
func TestSchemaValidatesConfigs(t *testing.T) {
	schema := loadSchema(t)
	files, _ := filepath.Glob(filepath.Join(repoRoot, "examples", "*.yaml"))
	files = append(files, filepath.Join(repoRoot, "cmd", "simdedge", "default.yaml"))
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, err := range validateYAML(t, schema, src) {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// TestSchemaRefuses: the schema and the validator catch the mistakes an
// editor should mark, so the passes above mean something.
func TestSchemaRefuses(t *testing.T) {
	schema := loadSchema(t)
	for _, src := range []string{
		"listen: \"127.0.0.1:8080\"\nroutse: []\n",                                      // unknown top-level key
		"routes:\n  - match: {hots: example.com}\n    respond: {status: 200}\n",         // unknown nested key
		"routes:\n  - respond: {status: ok}\n",                                          // wrong type
		"routes:\n  - respond: {body: x}\n",                                             // required key missing
		"upstreams:\n  - {name: a, targets: [\"h:1\"], balance: fastest}\nroutes: []\n", // not an allowed value
		"timeouts: {idle: 10}\nroutes: []\n",                                            // a duration needs a unit
		"upstreams:\n  - {name: a, targets: [{adress: \"h:1\"}]}\nroutes: []\n",         // target mapping typo
		"routes:\n  - match: {headers: {X-A: {prefix: a, regex: b}}}\n    echo: {}\n",   // two kinds of header match
		"upstreams:\n  - {name: a, targets: [\"h:1\"], health: {passive: {max_ejected: 150}}}\nroutes: []\n",
	} {
		if len(validateYAML(t, schema, []byte(src))) == 0 {
			t.Errorf("schema accepts:\n%s", src)
		}
	}
}
