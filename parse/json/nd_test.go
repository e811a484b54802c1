package json

import (
	"bytes"
	"reflect"
	"testing"
)

func TestParseND(t *testing.T) {
	cases := []struct {
		in    string
		roots int
		ok    bool
	}{
		{"", 0, true},
		{"\n\n", 0, true},
		{`{"a":1}`, 1, true},
		{"{\"a\":1}\n{\"b\":[2,3]}\n", 2, true},
		{"[1]\r\n[2]\n\n  [3]  ", 3, true},
		{"1\n\"x\"\nnull", 3, true},
		{`{"a":1} {"b":2}`, 0, false},
		{`{"a":1}{"b":2}`, 0, false},
		{"[1]\n,[2]", 0, false},
		{"[1]\n[2", 0, false},
	}
	for _, tc := range cases {
		for _, p := range engineParsers(Options{}) {
			doc, err := p.ParseND([]byte(tc.in))
			if (err == nil) != tc.ok {
				t.Fatalf("%q %v: err %v, want ok=%v", tc.in, p.Engine(), err, tc.ok)
			}
			if err != nil {
				continue
			}
			var got []any
			it := doc.Roots()
			for it.Next() {
				got = append(got, toAny(t, it.Value()))
			}
			if len(got) != tc.roots {
				t.Fatalf("%q %v: %d roots, want %d", tc.in, p.Engine(), len(got), tc.roots)
			}
			// Each line parsed alone gives the same value.
			var want []any
			for _, line := range bytes.Split([]byte(tc.in), []byte("\n")) {
				if len(bytes.TrimSpace(line)) == 0 {
					continue
				}
				v, ok := stdAnyNumber(line)
				if !ok {
					t.Fatalf("bad line in case %q", tc.in)
				}
				want = append(want, v)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%q %v: %v, want %v", tc.in, p.Engine(), got, want)
			}
		}
	}
}
