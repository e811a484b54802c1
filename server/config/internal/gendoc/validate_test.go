package main

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
)

// validate checks doc against schema, a JSON Schema as decoded from JSON.
// It knows exactly the keywords gendoc writes and fails on any other, so
// a schema keyword it would silently ignore cannot appear.
func validate(schema map[string]any, doc any, at string) []error {
	var errs []error
	fail := func(f string, a ...any) { errs = append(errs, fmt.Errorf("%s: %s", at, fmt.Sprintf(f, a...))) }
	keys := make([]string, 0, len(schema))
	for k := range schema {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := schema[k]
		switch k {
		case "$schema", "title", "description", "default":
		case "type":
			if !typeOK(v, doc) {
				fail("%v is not of type %v", doc, v)
			}
		case "enum":
			if !slices.ContainsFunc(v.([]any), func(e any) bool { return equal(e, doc) }) {
				fail("%v is not one of %v", doc, v)
			}
		case "pattern":
			if s, ok := doc.(string); ok && !regexp.MustCompile(v.(string)).MatchString(s) {
				fail("%q does not match %s", s, v)
			}
		case "minimum", "maximum":
			if n, ok := number(doc); ok && (k == "minimum" && n < v.(float64) || k == "maximum" && n > v.(float64)) {
				fail("%v is out of range (%s %v)", doc, k, v)
			}
		case "properties", "additionalProperties", "required":
			m, ok := doc.(map[string]any)
			if !ok {
				continue
			}
			switch k {
			case "required":
				for _, r := range v.([]any) {
					if _, ok := m[r.(string)]; !ok {
						fail("%s is required", r)
					}
				}
			case "properties":
				for name, s := range v.(map[string]any) {
					if x, ok := m[name]; ok {
						errs = append(errs, validate(s.(map[string]any), x, at+"."+name)...)
					}
				}
			case "additionalProperties":
				props, _ := schema["properties"].(map[string]any)
				for name, x := range m {
					if _, ok := props[name]; ok {
						continue
					}
					switch a := v.(type) {
					case bool:
						if !a {
							fail("unknown key %s", name)
						}
					case map[string]any:
						errs = append(errs, validate(a, x, at+"."+name)...)
					}
				}
			}
		case "items":
			if l, ok := doc.([]any); ok {
				for i, x := range l {
					errs = append(errs, validate(v.(map[string]any), x, fmt.Sprintf("%s[%d]", at, i))...)
				}
			}
		case "oneOf":
			n := 0
			for _, s := range v.([]any) {
				if len(validate(s.(map[string]any), doc, at)) == 0 {
					n++
				}
			}
			if n != 1 {
				fail("%v matches %d of oneOf's schemas, not 1", doc, n)
			}
		default:
			fail("schema keyword %q is unknown to this validator", k)
		}
	}
	return errs
}

func typeOK(t any, doc any) bool {
	if l, ok := t.([]any); ok {
		return slices.ContainsFunc(l, func(x any) bool { return typeOK(x, doc) })
	}
	switch t {
	case "object":
		_, ok := doc.(map[string]any)
		return ok
	case "array":
		_, ok := doc.([]any)
		return ok
	case "string":
		_, ok := doc.(string)
		return ok
	case "boolean":
		_, ok := doc.(bool)
		return ok
	case "integer":
		n, ok := number(doc)
		return ok && n == float64(int64(n))
	case "number":
		_, ok := number(doc)
		return ok
	}
	return false
}

// number reads YAML's integers and floats.
func number(doc any) (float64, bool) {
	switch n := doc.(type) {
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case uint64:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}

func equal(a, b any) bool {
	if x, ok := number(a); ok {
		y, ok := number(b)
		return ok && x == y
	}
	return a == b
}
