package json

import (
	"bytes"
	stdjson "encoding/json"
	"errors"
	"strconv"
	"testing"
)

// engineParsers returns one parser per engine usable here, each forced to
// use its engine at every input length.
func engineParsers(opts Options) []*Parser {
	var ps []*Parser
	for _, e := range Engines() {
		o := opts
		o.Engine = e
		p := NewParser(o)
		p.doc.simdMin, p.doc.marksMin = 0, 0
		ps = append(ps, p)
		if e == EnginePureGo && useMarks() {
			// The same engine without the structural index (index.go),
			// and without marks either (marks.go): its marks scans and
			// its word loops must give the same documents and the same
			// errors.
			p := NewParser(o)
			p.doc.marksMin = 0
			p.doc.noIndex = true
			ps = append(ps, p)
			p = NewParser(o)
			p.doc.noMarks = true
			ps = append(ps, p)
		}
	}
	return ps
}

// toAny converts a value into the shape encoding/json produces with
// UseNumber, with numbers normalized by normNumber.
func toAny(t testing.TB, v Value) any {
	switch v.Kind() {
	case Null:
		return nil
	case Bool:
		b, err := v.Bool()
		if err != nil {
			t.Fatalf("Bool: %v", err)
		}
		return b
	case Number:
		if n, err := v.Int(); err == nil {
			return n
		}
		if n, err := v.Uint(); err == nil {
			return n
		}
		f, err := v.Float()
		if err != nil && !errors.Is(err, ErrRange) {
			t.Fatalf("Float: %v", err)
		}
		return f
	case String:
		s, err := v.String()
		if err != nil {
			t.Fatalf("String: %v", err)
		}
		return s
	case Array:
		it, err := v.Array()
		if err != nil {
			t.Fatalf("Array: %v", err)
		}
		out := []any{}
		for it.Next() {
			out = append(out, toAny(t, it.Value()))
		}
		return out
	case Object:
		it, err := v.Object()
		if err != nil {
			t.Fatalf("Object: %v", err)
		}
		out := map[string]any{}
		for it.Next() {
			k, err := it.Key().String()
			if err != nil {
				t.Fatalf("key: %v", err)
			}
			out[k] = toAny(t, it.Value()) // last duplicate wins, as in encoding/json
		}
		return out
	}
	t.Fatalf("invalid value")
	return nil
}

// normNumber maps a number text to int64, uint64 or float64 by the same
// rules as toAny: integer text in int64 range, then uint64, else float64.
func normNumber(s string) any {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n
	}
	if n, err := strconv.ParseUint(s, 10, 64); err == nil {
		return n
	}
	if s == "-0" {
		return int64(0)
	}
	f, _ := strconv.ParseFloat(s, 64)
	return f
}

func stdAnyNumber(b []byte) (any, bool) {
	var v any
	d := stdjson.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		return nil, false
	}
	return normAny(v), true
}

func normAny(v any) any {
	switch x := v.(type) {
	case stdjson.Number:
		return normNumber(string(x))
	case []any:
		for i := range x {
			x[i] = normAny(x[i])
		}
	case map[string]any:
		for k := range x {
			x[k] = normAny(x[k])
		}
	}
	return v
}
