package cjson

import "testing"

// TestParse checks the binding on a small document, each simdjson kernel
// this CPU runs, and that a malformed one is rejected.
func TestParse(t *testing.T) {
	if !Available() {
		if Required() {
			t.Fatal(Reason())
		}
		t.Skip(Reason())
	}
	impls := Implementations()
	if len(impls) == 0 {
		t.Fatal("simdjson lists no implementation for this cpu")
	}
	for _, impl := range append([]string{""}, impls...) {
		p, err := New([]byte(`{"a":[1,2.5,"x\u00e9"],"b":null}`), impl)
		if err != nil {
			t.Fatalf("%q: %v", impl, err)
		}
		if impl != "" && p.Implementation() != impl {
			t.Errorf("parser runs %q, want %q", p.Implementation(), impl)
		}
		if n, err := p.Parse(); err != nil || n == 0 {
			t.Errorf("%q: Parse = %d, %v", impl, n, err)
		}
		n1, err1 := p.Stage1()
		n2, err2 := p.Stage2()
		if err1 != nil || err2 != nil || n1 == 0 || n2 != n1 {
			t.Errorf("%q: Stage1 = %d, %v; Stage2 = %d, %v", impl, n1, err1, n2, err2)
		}
		p.Close()
	}
	bad, err := New([]byte(`{"a":[1,}`), "")
	if err != nil {
		t.Fatal(err)
	}
	defer bad.Close()
	if _, err := bad.Parse(); err != ErrParse {
		t.Errorf("malformed document: err = %v, want ErrParse", err)
	}
	if _, err := New([]byte(`1`), "no-such-kernel"); err == nil {
		t.Error("unknown implementation accepted")
	}
	t.Logf("simdjson %s, kernels %v", Version(), impls)
}
