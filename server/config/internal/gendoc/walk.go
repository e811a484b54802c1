package main

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/simdedge/simdedge/server/config"
)

// kind is how a key is written in YAML.
type kind int

const (
	kString kind = iota
	kBool
	kInt
	kNumber
	kDuration
	kPercent
	kStrings   // list of strings
	kInts      // list of integers
	kStringMap // mapping of NAME to string
	kIntMap    // mapping of NAME to integer
	kHeaderMatches
	kSection // a mapping of keys (a struct)
	kList    // a list of sections
	kTargets // a list of "host:port" or {address, weight}
)

// key is one configuration key found in the config types.
type key struct {
	Path    string // "routes[].match.host"
	Name    string // "host"
	Context string // "routes[].match"; "" at the top level
	Kind    kind
	// Type is the Go field type, for error messages.
	Type reflect.Type
	Doc  doc
}

// Named types the walker knows how to write. A new named type in the
// config structs fails the walk until it is added here, so that the
// reference never guesses how a key is written.
var (
	tDuration      = reflect.TypeFor[config.Duration]()
	tPercent       = reflect.TypeFor[config.Percent]()
	tTarget        = reflect.TypeFor[config.Target]()
	tHeaderMatches = reflect.TypeFor[config.HeaderMatches]()
	tQueryMatches  = reflect.TypeFor[config.QueryMatches]()
	tFields        = reflect.TypeFor[config.Fields]()
)

// walk lists every key of t (config.Config) in declaration order. It
// fails on a field without a yaml tag and on a type it cannot write.
func walk(t reflect.Type) ([]key, error) {
	var out []key
	err := walkStruct(t, "", &out)
	return out, err
}

func walkStruct(t reflect.Type, context string, out *[]key) error {
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag, ok := f.Tag.Lookup("yaml")
		if !ok {
			return fmt.Errorf("gendoc: %s.%s has no yaml tag", t.Name(), f.Name)
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		ft := f.Type
		if strings.Contains(opts, "inline") {
			if err := walkStruct(ft, context, out); err != nil {
				return err
			}
			continue
		}
		path := name
		if context != "" {
			path = context + "." + name
		}
		k := key{Path: path, Name: name, Context: context, Type: ft}
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		var err error
		k.Kind, err = kindOf(ft)
		if err != nil {
			return fmt.Errorf("gendoc: %s: %w", path, err)
		}
		*out = append(*out, k)
		switch k.Kind {
		case kSection:
			err = walkStruct(ft, path, out)
		case kList, kTargets:
			err = walkStruct(ft.Elem(), path+"[]", out)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func kindOf(t reflect.Type) (kind, error) {
	switch t {
	case tDuration:
		return kDuration, nil
	case tPercent:
		return kPercent, nil
	case tHeaderMatches:
		return kHeaderMatches, nil
	case tQueryMatches, tFields:
		return kStringMap, nil
	}
	if t.PkgPath() != "" && t.Kind() != reflect.Struct && t.Kind() != reflect.Slice {
		return 0, fmt.Errorf("named type %s is unknown to gendoc (walk.go)", t)
	}
	switch t.Kind() {
	case reflect.String:
		return kString, nil
	case reflect.Bool:
		return kBool, nil
	case reflect.Int, reflect.Int64:
		return kInt, nil
	case reflect.Float64:
		return kNumber, nil
	case reflect.Struct:
		return kSection, nil
	case reflect.Slice:
		switch e := t.Elem(); {
		case e == tTarget:
			return kTargets, nil
		case e.Kind() == reflect.String:
			return kStrings, nil
		case e.Kind() == reflect.Int:
			return kInts, nil
		case e.Kind() == reflect.Struct && e.PkgPath() != "" && len(e.Name()) > 0:
			return kList, nil
		}
	case reflect.Map:
		if t.Key().Kind() == reflect.String {
			switch t.Elem().Kind() {
			case reflect.String:
				return kStringMap, nil
			case reflect.Int:
				return kIntMap, nil
			}
		}
	}
	return 0, fmt.Errorf("type %s is unknown to gendoc (walk.go)", t)
}
