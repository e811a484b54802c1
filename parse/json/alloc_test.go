package json

import "testing"

// TestZeroAllocs asserts the steady-state hot paths allocate nothing: parse
// (pure-Go engine; simdjson-go allocates inside itself on large inputs, see
// Parser), path lookup, iteration, number and string reads.
func TestZeroAllocs(t *testing.T) {
	in := []byte(`{"statuses":[{"id":1,"user":{"screen_name":"a","name":"b\u00e9"}},{"id":2,"user":{"screen_name":"c","name":"d"}}],"n":1.5}`)
	for _, p := range append(engineParsers(Options{}), engineParsers(Options{Eager: true})...) {
		if p.Engine() == EngineSIMD {
			p.doc.simdMin = simdMinLen // as in production: small bodies take the pure-Go engine
		}
		p.Parse(in)
		buf := make([]byte, 0, 64)
		allocs := testing.AllocsPerRun(200, func() {
			doc, err := p.Parse(in)
			if err != nil {
				t.Fatal(err)
			}
			st, _ := doc.Root().Key("statuses")
			it, _ := st.Array()
			for it.Next() {
				id, _ := it.Value().Get("id")
				if _, err := id.Int(); err != nil {
					t.Fatal(err)
				}
				sn, _ := it.Value().Get("user", "screen_name")
				if _, ok := sn.View(); !ok {
					t.Fatal("view")
				}
				nm, _ := it.Value().Get("user", "name")
				buf, _ = nm.AppendString(buf[:0])
			}
			f, _ := doc.Root().Key("n")
			if _, err := f.Float(); err != nil {
				t.Fatal(err)
			}
			obj, _ := doc.Root().Object()
			for obj.Next() {
				_ = obj.Key().Equal("n")
			}
			if err := p.Validate(in); err != nil {
				t.Fatal(err)
			}
		})
		if allocs != 0 {
			t.Errorf("%v: %v allocations per run", p.Engine(), allocs)
		}
	}
}

// TestCorpusZeroAllocs parses a large corpus with the pure-Go engine in
// steady state, lazily and with Options.Eager.
func TestCorpusZeroAllocs(t *testing.T) {
	data := sharedJSON(t, "twitter.json")
	for _, eager := range []bool{false, true} {
		p := NewParser(Options{Engine: EnginePureGo, Eager: eager})
		p.Parse(data)
		if n := testing.AllocsPerRun(5, func() { p.Parse(data) }); n != 0 {
			t.Errorf("eager %v: %v allocations per parse", eager, n)
		}
	}
}
