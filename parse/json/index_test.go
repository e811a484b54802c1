package json

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/simdedge/simdedge/asm"
)

// refStructurals is the reference of index.build's positions: a byte loop
// that tracks strings and escapes, and reports operators and opening quotes
// outside strings and the first byte of every other run of non-whitespace
// outside strings. As in simdjson, a backslash escapes the next byte
// outside strings too (a quote after it opens nothing): such input is
// invalid whichever way it is read, and the second stage rejects it.
func refStructurals(b []byte) []uint32 {
	var out []uint32
	inStr, esc, scalar := false, false, false
	for i, c := range b {
		escaped := esc
		esc = !escaped && c == '\\'
		quote := c == '"' && !escaped
		switch {
		case inStr:
			inStr = !quote
		case quote:
			inStr, scalar = true, false
			out = append(out, uint32(i))
		case c == '{' || c == '}' || c == '[' || c == ']' || c == ':' || c == ',':
			scalar = false
			out = append(out, uint32(i))
		case jsonSpace(c):
			scalar = false
		default:
			if !scalar {
				out = append(out, uint32(i))
			}
			scalar = true
		}
	}
	return out
}

// indexBytes are the bytes that change the index's state.
const indexBytes = "\"\\{}[]:, \t\n\rx1\x00\x1f\xc3"

// TestIndexPositions checks index.build against refStructurals at every
// asm level with SIMD kernels, on inputs of every length up to 300 bytes at
// every offset in a 64-byte block, and on inputs that cross window
// boundaries, built from the bytes that matter (runs of backslashes of
// every parity across block ends included).
func TestIndexPositions(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	fill := func(n, dense int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = 'a'
			if r.IntN(dense) == 0 {
				b[i] = indexBytes[r.IntN(len(indexBytes))]
			}
			if r.IntN(50) == 0 { // a run of backslashes
				for k := r.IntN(5); k > 0 && i < n; k-- {
					b[i] = '\\'
					i++
				}
				i--
			}
		}
		return b
	}
	check := func(b []byte) {
		t.Helper()
		if len(b) == 0 {
			return
		}
		var x index
		x.build(b)
		want := append(refStructurals(b), uint32(len(b)), uint32(len(b)))
		if !slices.Equal(x.pos, want) {
			t.Fatalf("%v len %d: positions %v, want %v (input %q)", asm.Active(), len(b), x.pos, want, b)
		}
	}
	for _, l := range asm.Levels() {
		if l == asm.Generic {
			continue
		}
		prev := asm.SetLevel(l)
		buf := make([]byte, 64+300)
		for n := 0; n <= 300; n++ {
			for off := 0; off < 64; off += 7 {
				copy(buf[off:], fill(n, 1+r.IntN(8)))
				check(buf[off : off+n])
			}
		}
		for _, n := range []int{markWindow - 1, markWindow, markWindow + 1, 3*markWindow + 65} {
			for _, dense := range []int{1, 3, 40} {
				check(fill(n, dense))
			}
		}
		asm.SetLevel(prev)
	}
}

// TestIndexEngine checks that the parser with the structural index builds
// exactly the tape of the marks engine and fails with the same errors, on
// the conformance cases, the fuzz seeds and the shared corpora.
func TestIndexEngine(t *testing.T) {
	if !useMarks() {
		t.Skip("the index runs only where asm has SIMD kernels")
	}
	inputs := [][]byte{}
	for _, tc := range edgeCases {
		inputs = append(inputs, []byte(tc.in))
	}
	for _, s := range fuzzSeeds {
		inputs = append(inputs, []byte(s))
	}
	for _, name := range []string{"twitter.json", "citm_catalog.json", "canada.json"} {
		if b := sharedJSONOptional(name); b != nil {
			inputs = append(inputs, b)
		}
	}
	for _, in := range inputs {
		compareIndexEngine(t, in)
	}
}

// compareIndexEngine parses in with and without the index and fails on any
// difference in the tape or the error.
func compareIndexEngine(t *testing.T, in []byte) {
	t.Helper()
	pi, pm := NewParser(Options{}), NewParser(Options{})
	pi.doc.marksMin, pm.doc.marksMin = 0, 0
	pm.doc.noIndex = true
	_, erri := pi.Parse(in)
	_, errm := pm.Parse(in)
	if (erri == nil) != (errm == nil) || (erri != nil && erri.Error() != errm.Error()) {
		t.Fatalf("index engine: %v, marks engine: %v (input %q)", erri, errm, in)
	}
	if erri == nil && !slices.Equal(pi.doc.tape, pm.doc.tape) {
		t.Fatalf("index engine builds a different tape (input %.200q)", in)
	}
	// The fallback hides a second stage that gives up: on a valid document
	// it must not, or the index would only cost time.
	if errm == nil {
		var x index
		x.build(in)
		if _, _, ok := buildIndexed(nil, nil, in, &x, DefaultMaxDepth, nil); !ok {
			t.Fatalf("index stage gave up on a valid document (input %.200q)", in)
		}
	}
}

// FuzzIndex compares the index engine with the marks engine, tape for tape.
func FuzzIndex(f *testing.F) {
	addSeeds(f)
	f.Add([]byte(`{"a\\"b":"c\\\\","d":[1,2.5e3,-0,true,false,null,"\u00e9"]}`))
	f.Add([]byte(`["\\\\\\"", 12x, "a"]`))
	if !useMarks() {
		f.Skip("the index runs only where asm has SIMD kernels")
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		compareIndexEngine(t, in)
	})
}

// TestIndexLayout checks that the marks layout the second stage reads is
// the one asm.JSONIndex writes, and that the index's windows are whole
// blocks (JSONIndex's carry joins only those).
func TestIndexLayout(t *testing.T) {
	if markStop != asm.JSONStops || markClasses != asm.JSONMaskWords || markWindow%asm.BlockSize != 0 {
		t.Fatal("index.mk's layout differs from asm.JSONIndex'")
	}
}
