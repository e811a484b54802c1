package json

import (
	stdjson "encoding/json"
	"errors"
	"reflect"
	"testing"
)

var fuzzSeeds = []string{
	`{"statuses":[{"id":1,"user":{"id":2,"screen_name":"a\u00e9"}}]}`,
	`[1, -0, 0.5e-3, 1E400, 18446744073709551616, -9223372036854775809]`,
	`"\ud83d\ude00\n\t\\\/"`, `{"a":{"b":[null,true,false,{}]}}`, "\n[1]\n\n{\"a\":2}\n",
}

func addSeeds(f *testing.F) {
	for _, tc := range edgeCases {
		f.Add([]byte(tc.in))
	}
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
}

// intendedDivergence reports the errors for which this package rejects what
// encoding/json accepts, on purpose (see the i_ cases in conformance_test.go).
func intendedDivergence(err error) bool {
	return errors.Is(err, ErrInvalidUTF8) || errors.Is(err, ErrLoneSurrogate) || errors.Is(err, ErrDepth)
}

// FuzzParse checks that the engines never panic, agree with each other on
// the verdict, the error and the whole value tree, and agree with
// encoding/json except for the intended divergences.
func FuzzParse(f *testing.F) {
	addSeeds(f)
	ps := engineParsers(Options{})
	f.Fuzz(func(t *testing.T, in []byte) {
		var (
			firstErr  error
			firstTree any
		)
		for k, p := range ps {
			doc, err := p.Parse(in)
			var tree any
			if err == nil {
				tree = toAny(t, doc.Root())
			}
			if k == 0 {
				firstErr, firstTree = err, tree
				continue
			}
			if (err == nil) != (firstErr == nil) || (err != nil && err.Error() != firstErr.Error()) {
				t.Fatalf("engines disagree: %v vs %v", firstErr, err)
			}
			if !reflect.DeepEqual(tree, firstTree) {
				t.Fatalf("engines build different trees")
			}
		}
		for _, p := range ps { // with and without marks
			if verr := p.Validate(in); (verr == nil) != (firstErr == nil) ||
				(verr != nil && verr.(*Error).Offset != firstErr.(*Error).Offset) {
				t.Fatalf("Validate %v, Parse %v", verr, firstErr)
			}
		}
		stdOK := stdjson.Valid(in)
		switch {
		case firstErr == nil && !stdOK:
			t.Fatalf("accepted what encoding/json rejects")
		case firstErr != nil && stdOK && !intendedDivergence(firstErr):
			t.Fatalf("rejected what encoding/json accepts: %v", firstErr)
		case firstErr == nil:
			want, ok := stdAnyNumber(in)
			if !ok || !reflect.DeepEqual(firstTree, want) {
				t.Fatalf("tree differs from encoding/json")
			}
		}
	})
}

// FuzzParseND checks the NDJSON parser: engines agree, and each root equals
// the document Parse builds from the same bytes.
func FuzzParseND(f *testing.F) {
	addSeeds(f)
	ps := engineParsers(Options{})
	f.Fuzz(func(t *testing.T, in []byte) {
		var first []any
		var firstErr error
		for k, p := range ps {
			doc, err := p.ParseND(in)
			var roots []any
			if err == nil {
				it := doc.Roots()
				for it.Next() {
					roots = append(roots, toAny(t, it.Value()))
				}
			}
			if k == 0 {
				first, firstErr = roots, err
				continue
			}
			if (err == nil) != (firstErr == nil) || (err != nil && err.Error() != firstErr.Error()) {
				t.Fatalf("engines disagree: %v vs %v", firstErr, err)
			}
			if !reflect.DeepEqual(roots, first) {
				t.Fatalf("engines build different roots")
			}
		}
		if firstErr == nil && len(first) == 1 {
			doc, err := ps[0].Parse(in)
			if err != nil {
				t.Fatalf("one NDJSON root but Parse fails: %v", err)
			}
			if !reflect.DeepEqual(toAny(t, doc.Root()), first[0]) {
				t.Fatalf("NDJSON root differs from Parse")
			}
		}
	})
}
