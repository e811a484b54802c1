package main

import (
	"strconv"
	"strings"
	"testing"

	"github.com/simdedge/simdedge/server/config"
	"go.yaml.in/yaml/v3"
)

// notAValue is in no key's list of values.
const notAValue = "zz-not-a-value"

// valuesExempt are keys whose allowed values cannot each be tried in one
// example, with the reason.
var valuesExempt = map[string]string{
	"listeners[].transport": "each transport needs its own section (xdp, rdma) or an address",
}

// TestAllowedValues checks the table's lists of values against the
// decoder: each value loads in some example that uses the key, and a
// value outside the list loads in none.
func TestAllowedValues(t *testing.T) {
	es, err := entries()
	if err != nil {
		t.Fatal(err)
	}
	var examples []string
	for _, e := range es {
		if e.Doc.Example != "" {
			examples = append(examples, exampleConfig(e.Doc.Example))
		}
	}
	for _, e := range es {
		if len(e.Doc.Values) == 0 || valuesExempt[e.Path] != "" {
			continue
		}
		path := strings.Split(e.Path, ".")
		tried := 0
		for _, v := range append(append([]string(nil), e.Doc.Values...), notAValue) {
			loads := 0
			for _, ex := range examples {
				src, ok := substitute(t, ex, path, v, e.Kind == kStrings, e.Kind == kInt)
				if !ok {
					continue
				}
				tried++
				if _, err := config.Parse(src); err == nil {
					loads++
				}
			}
			switch {
			case v == notAValue && loads > 0:
				t.Errorf("%s: a value outside %v loads", e.Path, e.Doc.Values)
			case v != notAValue && loads == 0:
				t.Errorf("%s: the listed value %q loads in no example", e.Path, v)
			}
		}
		if tried == 0 {
			t.Errorf("%s: no example uses it", e.Path)
		}
	}
}

// substitute sets every value at path in the YAML document src to v (a
// one-element list when list), reporting whether the path was found.
func substitute(t *testing.T, src string, path []string, v string, list, integer bool) ([]byte, bool) {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatal(err)
	}
	found := false
	var walk func(n *yaml.Node, path []string)
	walk = func(n *yaml.Node, path []string) {
		name, each := strings.CutSuffix(path[0], "[]")
		if n.Kind != yaml.MappingNode {
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value != name {
				continue
			}
			val := n.Content[i+1]
			switch {
			case len(path) == 1 && list:
				*val = yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle, Content: []*yaml.Node{{Kind: yaml.ScalarNode, Value: v, Tag: "!!str"}}}
				found = true
			case len(path) == 1:
				tag := "!!str"
				if integer && v != notAValue {
					tag = "!!int"
				}
				*val = yaml.Node{Kind: yaml.ScalarNode, Value: v, Tag: tag}
				found = true
			case each && val.Kind == yaml.SequenceNode:
				for _, c := range val.Content {
					walk(c, path[1:])
				}
			default:
				walk(val, path[1:])
			}
		}
	}
	walk(doc.Content[0], path)
	if !found {
		return nil, false
	}
	b, err := yaml.Marshal(&doc)
	if err != nil {
		t.Fatal(err)
	}
	return b, true
}

// TestRanges checks the table's integer ranges against the decoder: both
// bounds load in some example that uses the key, and the integers just
// outside them load in none.
func TestRanges(t *testing.T) {
	es, err := entries()
	if err != nil {
		t.Fatal(err)
	}
	var examples []string
	for _, e := range es {
		if e.Doc.Example != "" {
			examples = append(examples, exampleConfig(e.Doc.Example))
		}
	}
	for _, e := range es {
		r := e.Doc.Range
		if r == [2]int64{} {
			continue
		}
		path := strings.Split(e.Path, ".")
		for _, c := range []struct {
			v    int64
			want bool
		}{{r[0], true}, {r[1], true}, {r[0] - 1, false}, {r[1] + 1, false}} {
			loads, tried := 0, 0
			for _, ex := range examples {
				src, ok := substitute(t, ex, path, strconv.FormatInt(c.v, 10), false, true)
				if !ok {
					continue
				}
				tried++
				if _, err := config.Parse(src); err == nil {
					loads++
				}
			}
			switch {
			case tried == 0:
				t.Errorf("%s: no example uses it", e.Path)
			case c.want && loads == 0:
				t.Errorf("%s: %d, inside %v, loads in no example", e.Path, c.v, r)
			case !c.want && loads > 0:
				t.Errorf("%s: %d, outside %v, loads", e.Path, c.v, r)
			}
		}
	}
}
