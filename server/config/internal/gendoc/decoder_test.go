package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/simdedge/simdedge/server/config"
	"github.com/simdedge/simdedge/server/config/internal/keyhook"
)

// index is the "[3]" of a list element in a decoder path.
var index = regexp.MustCompile(`\[[0-9]+\]`)

// TestDecoderKeysMatchTypes: in every section the examples reach, the
// keys the decoder accepts are exactly the config types' yaml keys. A key
// parsed by hand in the decoder but missing from the types (and so from
// docs/config.md and the schema) fails here, as does a typed key the
// decoder does not read.
func TestDecoderKeysMatchTypes(t *testing.T) {
	es, err := entries()
	if err != nil {
		t.Fatal(err)
	}
	typed := map[string][]string{"": nil} // section path -> keys
	leaf := map[string]bool{}
	for _, e := range es {
		typed[e.Context] = append(typed[e.Context], e.Name)
		switch e.Kind {
		case kSection:
			typed[e.Path] = append(typed[e.Path], []string{}...)
		case kList, kTargets:
			typed[e.Path+"[]"] = append(typed[e.Path+"[]"], []string{}...)
		default:
			leaf[e.Path] = true
		}
	}
	decoded := map[string]map[string]bool{}
	keyhook.Seen = func(path string, keys []string) {
		p := index.ReplaceAllString(path, "[]")
		if decoded[p] == nil {
			decoded[p] = map[string]bool{}
		}
		for _, k := range keys {
			decoded[p][k] = true
		}
	}
	defer func() { keyhook.Seen = nil }()
	var srcs []string
	for _, e := range es {
		if e.Doc.Example != "" {
			srcs = append(srcs, exampleConfig(e.Doc.Example))
		}
	}
	files, _ := filepath.Glob(filepath.Join(repoRoot, "examples", "*.yaml"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		srcs = append(srcs, string(b))
	}
	for _, src := range srcs {
		config.Parse([]byte(src)) // errors are TestExamplesLoad's
	}
	for p, keys := range decoded {
		if underLeaf(p, leaf) {
			continue // match.headers' {prefix: ...}: one documented key
		}
		want, ok := typed[p]
		if !ok {
			t.Errorf("the decoder reads a section %s that the config types do not have", p)
			continue
		}
		var got []string
		for k := range keys {
			got = append(got, k)
		}
		sort.Strings(got)
		for _, k := range got {
			if !slices.Contains(want, k) {
				t.Errorf("the decoder accepts %s in %q, which the config types (and docs/config.md) lack", k, p)
			}
		}
		for _, k := range want {
			if !keys[k] {
				t.Errorf("the config types have %s in %q, which the decoder does not accept", k, p)
			}
		}
	}
	for p := range typed {
		if decoded[p] == nil {
			t.Errorf("no example reaches section %q", p)
		}
	}
}

func underLeaf(p string, leaf map[string]bool) bool {
	for q := p; q != ""; q = parent(q) {
		if leaf[strings.TrimSuffix(q, "[]")] {
			return true
		}
	}
	return false
}
