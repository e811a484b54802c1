package main

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/simdedge/simdedge/server/config"
)

// entry is a key with everything the reference shows about it.
type entry struct {
	key
	Default string // as shown; "" when there is none
	// JSONDefault is the schema's "default" (nil: none stated).
	JSONDefault any
	Reload      reload
	// ExampleOf is the path of the key whose example shows this one.
	ExampleOf string
}

// entries joins the walk, the defaults and the table. It fails on a key
// without an entry, an entry without a key, and a section without an
// example for its keys.
func entries() ([]entry, error) {
	ks, err := walk(reflect.TypeFor[config.Config]())
	if err != nil {
		return nil, err
	}
	defs, err := defaults()
	if err != nil {
		return nil, err
	}
	table := docs()
	var errs []error
	var out []entry
	byPath := map[string]*entry{}
	for _, k := range ks {
		d, ok := table[k.Path]
		if !ok {
			errs = append(errs, fmt.Errorf("gendoc: %s has no entry in the doc table: add one to server/config/internal/gendoc/keys_*.go, then run go run ./server/config/internal/gendoc", k.Path))
			continue
		}
		k.Doc = d
		e := entry{key: k}
		e.Default, e.JSONDefault = shownDefault(k, defs[k.Path])
		out = append(out, e)
	}
	for i := range out {
		byPath[out[i].Path] = &out[i]
	}
	for p := range table {
		if byPath[p] == nil {
			errs = append(errs, fmt.Errorf("gendoc: the doc table names %s, which the config types do not have", p))
		}
	}
	for i := range out {
		e := &out[i]
		e.Reload, e.ExampleOf = e.Doc.Reload, ""
		if e.Doc.Example != "" {
			e.ExampleOf = e.Path
		}
		for p := e.Context; (e.Reload == reloadInherit || e.ExampleOf == "") && p != ""; p = parent(p) {
			a := byPath[strings.TrimSuffix(p, "[]")]
			if a == nil {
				continue
			}
			if e.Reload == reloadInherit {
				e.Reload = a.Doc.Reload
			}
			if e.ExampleOf == "" && a.Doc.Example != "" {
				e.ExampleOf = a.Path
			}
		}
		if e.Reload == reloadInherit {
			errs = append(errs, fmt.Errorf("gendoc: %s: no reload entry on it or its sections", e.Path))
		}
		if e.ExampleOf == "" {
			errs = append(errs, fmt.Errorf("gendoc: %s: no example on it or its sections", e.Path))
		}
	}
	return out, errors.Join(errs...)
}

// parent is the context of a context: "routes[].match" -> "routes[]".
func parent(context string) string {
	context = strings.TrimSuffix(context, "[]")
	i := strings.LastIndexByte(context, '.')
	if i < 0 {
		return ""
	}
	return context[:i]
}

// shownDefault is the default the reference prints, and the schema's.
func shownDefault(k key, v reflect.Value) (string, any) {
	d := k.Doc.Default
	switch {
	case d == "-" || strings.HasPrefix(d, "- "):
		d = "—" + strings.TrimPrefix(d, "-")
		if k.Doc.Required {
			d = "— (required)"
		}
		return d, nil
	case d != "":
		return d, nil
	}
	if k.Doc.Required {
		return "— (required)", nil
	}
	s := render(v)
	if s == "" || s == "[]" || s == "{}" || k.Kind == kSection || k.Kind == kList {
		return "—", nil
	}
	if k.Kind == kDuration {
		s = shortDuration(time.Duration(v.Int()))
	}
	return s, jsonDefault(k, v)
}

// shortDuration writes "1h" and "1m" rather than Go's "1h0m0s".
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}

// generate returns docs/config.md and docs/simdedge.schema.json.
func generate() ([]byte, []byte, error) {
	es, err := entries()
	if err != nil {
		return nil, nil, err
	}
	schema, err := schemaJSON(es)
	if err != nil {
		return nil, nil, err
	}
	return markdown(es), schema, nil
}

// children lists the entries whose context is path (or path[]).
func children(es []entry, path string) []entry {
	var out []entry
	for _, e := range es {
		if e.Context == path || e.Context == path+"[]" {
			out = append(out, e)
		}
	}
	return out
}
