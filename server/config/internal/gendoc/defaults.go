package main

import (
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/simdedge/simdedge/server/config"
)

// defaults reads every key's default from config.WithDefaults: the
// configuration it is given has every optional section present (one
// element in each list, a tcp, an xdp and an rdma listener), so each
// withDefaults runs, and the value it leaves at a key's path is that
// key's default. A zero value means the key has no default (the table
// says what absence means).
func defaults() (map[string]reflect.Value, error) {
	var c config.Config
	fill(reflect.ValueOf(&c).Elem())
	// The listeners' defaults depend on their transport.
	tcp := c.Listeners[0]
	tcp.Transport, tcp.XDP, tcp.RDMA = config.TransportTCP, nil, nil
	xdp := config.Listener{Transport: config.TransportXDP, XDP: &config.XDP{}}
	rdma := config.Listener{Transport: config.TransportRDMA, RDMA: &config.RDMA{}}
	c.Listeners = []config.Listener{tcp, xdp, rdma}
	e := c.WithDefaults()
	out := map[string]reflect.Value{}
	ks, err := walk(reflect.TypeFor[config.Config]())
	if err != nil {
		return nil, err
	}
	for _, k := range ks {
		out[k.Path] = lookup(reflect.ValueOf(e).Elem(), strings.Split(k.Path, "."))
	}
	return out, nil
}

// fill allocates every pointer and gives every list of sections one
// element, recursively; scalars stay zero.
func fill(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if v.Type().Elem().Kind() == reflect.Struct {
			v.Set(reflect.New(v.Type().Elem()))
			fill(v.Elem())
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i))
			}
		}
	case reflect.Slice:
		if e := v.Type().Elem(); e.Kind() == reflect.Struct && v.Type() != tHeaderMatches && v.Type() != tQueryMatches && v.Type() != tFields {
			v.Set(reflect.MakeSlice(v.Type(), 1, 1))
			fill(v.Index(0))
		}
	}
}

// lookup follows a key path; in a list it takes the first element whose
// value at the rest of the path is not zero.
func lookup(v reflect.Value, path []string) reflect.Value {
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return reflect.Value{}
		}
		v = v.Elem()
	}
	if len(path) == 0 {
		return v
	}
	name, list := strings.CutSuffix(path[0], "[]")
	f, ok := field(v, name)
	if !ok {
		return reflect.Value{}
	}
	if !list {
		return lookup(f, path[1:])
	}
	var first reflect.Value
	for i := range f.Len() {
		r := lookup(f.Index(i), path[1:])
		if r.IsValid() && !r.IsZero() {
			return r
		}
		if i == 0 {
			first = r
		}
	}
	return first
}

// field finds the field of struct v whose yaml name is name, looking
// into inline fields.
func field(v reflect.Value, name string) (reflect.Value, bool) {
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if strings.Contains(opts, "inline") {
			if r, ok := field(v.Field(i), name); ok {
				return r, true
			}
		}
		if tag == name {
			return v.Field(i), true
		}
	}
	return reflect.Value{}, false
}

// render writes a default as YAML would; "" for no value.
func render(v reflect.Value) string {
	if !v.IsValid() {
		return ""
	}
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return ""
		}
		v = v.Elem()
	}
	switch v.Type() {
	case tDuration:
		return time.Duration(v.Int()).String()
	case tPercent:
		return strconv.FormatInt(v.Int(), 10) + "%"
	}
	switch v.Kind() {
	case reflect.String:
		return v.String()
	case reflect.Bool:
		return strconv.FormatBool(v.Bool())
	case reflect.Int, reflect.Int64:
		return strconv.FormatInt(v.Int(), 10)
	case reflect.Float64:
		return strconv.FormatFloat(v.Float(), 'g', -1, 64)
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Struct {
			return ""
		}
		var s []string
		for i := range v.Len() {
			s = append(s, render(v.Index(i)))
		}
		return "[" + strings.Join(s, ", ") + "]"
	case reflect.Map:
		var s []string
		for _, k := range v.MapKeys() {
			s = append(s, fmt.Sprintf("%s: %s", k.String(), render(v.MapIndex(k))))
		}
		sort.Strings(s)
		return "{" + strings.Join(s, ", ") + "}"
	}
	return ""
}

// jsonDefault is a default as a JSON Schema "default": nil when the key
// has none to state.
func jsonDefault(k key, v reflect.Value) any {
	s := render(v)
	if s == "" || k.Kind == kSection || k.Kind == kList {
		return nil
	}
	for v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	switch k.Kind {
	case kBool:
		return v.Bool()
	case kInt:
		return v.Int()
	case kNumber:
		return v.Float()
	case kStrings:
		out := []string{}
		for i := range v.Len() {
			out = append(out, v.Index(i).String())
		}
		return out
	case kIntMap:
		out := map[string]int64{}
		for _, mk := range v.MapKeys() {
			out[mk.String()] = v.MapIndex(mk).Int()
		}
		return out
	case kDuration:
		return shortDuration(time.Duration(v.Int()))
	case kString, kPercent:
		return s
	}
	return nil
}
