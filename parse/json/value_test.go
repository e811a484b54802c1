package json

import (
	"errors"
	"math"
	"testing"
)

// TestNumbers checks Int, Uint and Float on both engines against
// strconv-derived expectations, including range and kind errors.
func TestNumbers(t *testing.T) {
	cases := []struct {
		in   string
		i    int64
		iErr error
		u    uint64
		uErr error
		f    float64
		fErr error
	}{
		{"0", 0, nil, 0, nil, 0, nil},
		{"-0", 0, nil, 0, nil, 0, nil},
		{"42", 42, nil, 42, nil, 42, nil},
		{"-42", -42, nil, 0, ErrRange, -42, nil},
		{"9223372036854775807", math.MaxInt64, nil, math.MaxInt64, nil, 9223372036854775807, nil},
		{"-9223372036854775808", math.MinInt64, nil, 0, ErrRange, -9223372036854775808, nil},
		{"9223372036854775808", 0, ErrRange, 1 << 63, nil, 9223372036854775808, nil},
		{"18446744073709551615", 0, ErrRange, math.MaxUint64, nil, 18446744073709551615, nil},
		{"18446744073709551616", 0, ErrRange, 0, ErrRange, 18446744073709551616, nil},
		{"-9223372036854775809", 0, ErrRange, 0, ErrRange, -9223372036854775809, nil},
		{"123456789012345678901234", 0, ErrRange, 0, ErrRange, 123456789012345678901234, nil},
		{"1.0", 0, ErrNotInteger, 0, ErrNotInteger, 1, nil},
		{"1e2", 0, ErrNotInteger, 0, ErrNotInteger, 100, nil},
		{"-2.5E-3", 0, ErrNotInteger, 0, ErrNotInteger, -2.5e-3, nil},
		{"9007199254740993", 9007199254740993, nil, 9007199254740993, nil, 9007199254740992, nil},
		{"0.1", 0, ErrNotInteger, 0, ErrNotInteger, 0.1, nil},
		{"1e400", 0, ErrNotInteger, 0, ErrNotInteger, math.Inf(1), ErrRange},
		{"-1e400", 0, ErrNotInteger, 0, ErrNotInteger, math.Inf(-1), ErrRange},
		{"1e-400", 0, ErrNotInteger, 0, ErrNotInteger, 0, nil},
	}
	for _, tc := range cases {
		for _, p := range engineParsers(Options{}) {
			doc, err := p.Parse([]byte("[" + tc.in + "]"))
			if err != nil {
				t.Fatalf("%s: %v", tc.in, err)
			}
			v, _ := doc.Root().Index(0)
			i, err := v.Int()
			if !errors.Is(err, tc.iErr) || (err == nil && i != tc.i) {
				t.Errorf("%v %s: Int = %d, %v", p.Engine(), tc.in, i, err)
			}
			u, err := v.Uint()
			if !errors.Is(err, tc.uErr) || (err == nil && u != tc.u) {
				t.Errorf("%v %s: Uint = %d, %v", p.Engine(), tc.in, u, err)
			}
			f, err := v.Float()
			if !errors.Is(err, tc.fErr) || f != tc.f {
				t.Errorf("%v %s: Float = %g, %v", p.Engine(), tc.in, f, err)
			}
		}
	}
}

func TestAccessorErrors(t *testing.T) {
	for _, p := range engineParsers(Options{}) {
		doc, err := p.Parse([]byte(`{"a":[1,"x",true,null,{}],"k\u0065y":2,"a":3}`))
		if err != nil {
			t.Fatal(err)
		}
		root := doc.Root()
		if _, err := root.Get("a", 9); !errors.Is(err, ErrNotFound) {
			t.Errorf("index out of range: %v", err)
		}
		if _, err := root.Get("a", -1); !errors.Is(err, ErrNotFound) {
			t.Errorf("negative index: %v", err)
		}
		if _, err := root.Get("zz"); !errors.Is(err, ErrNotFound) {
			t.Errorf("missing key: %v", err)
		}
		if _, err := root.Get("a", "b"); !errors.Is(err, ErrWrongKind) {
			t.Errorf("key on array: %v", err)
		}
		if _, err := root.Get(1.5); !errors.Is(err, ErrBadPath) {
			t.Errorf("bad path element: %v", err)
		}
		v, err := root.Get("key")
		if err != nil {
			t.Fatalf("escaped key: %v", err)
		}
		if n, _ := v.Int(); n != 2 {
			t.Errorf("escaped key value %d", n)
		}
		if v, _ := root.Get("a"); v.Kind() != Array {
			t.Errorf("first duplicate not returned")
		}
		s, _ := root.Get("a", 1)
		if _, err := s.Int(); !errors.Is(err, ErrWrongKind) {
			t.Errorf("Int on string: %v", err)
		}
		if _, err := s.Bool(); !errors.Is(err, ErrWrongKind) {
			t.Errorf("Bool on string: %v", err)
		}
		if _, err := root.AppendString(nil); !errors.Is(err, ErrWrongKind) {
			t.Errorf("AppendString on object: %v", err)
		}
		if _, err := root.Array(); !errors.Is(err, ErrWrongKind) {
			t.Errorf("Array on object: %v", err)
		}
		var missing Value
		if missing.Exists() || missing.Kind() != Invalid {
			t.Errorf("zero Value exists")
		}
		if _, err := missing.Key("a"); !errors.Is(err, ErrWrongKind) {
			t.Errorf("Key on zero Value: %v", err)
		}
	}
}
