//go:build amd64 && !purego && !noasm

package json

import (
	"strings"
	"testing"
)

// TestTapeDepth checks the simd engine's depth check, with its skipping of
// shallow containers, against the depth counted by brackets.
func TestTapeDepth(t *testing.T) {
	if !simdAvailable {
		t.Skip("simd engine not available on this machine/build")
	}
	docs := []string{
		`[1,[2,[3,[4]]],{"a":{"b":[[]]}}]`,
		`{"x":[[[[[[1]]]]]],"y":[{"z":[[[[2]]]]}]}`,
		"[" + strings.Repeat(`{"a":[`, 20) + strings.Repeat("]}", 20) + "]",
	}
	for _, doc := range docs {
		p := NewParser(Options{Engine: EngineSIMD})
		p.doc.simdMin = 0
		if _, err := p.Parse([]byte(doc)); err != nil {
			t.Fatal(err)
		}
		deepest, depth := 0, 0
		for _, c := range []byte(doc) {
			switch c {
			case '[', '{':
				depth++
				deepest = max(deepest, depth)
			case ']', '}':
				depth--
			}
		}
		for limit := 1; limit <= deepest+2; limit++ {
			if got := tapeDepthOK(p.doc.tape, limit); got != (deepest <= limit) {
				t.Errorf("%s: limit %d: got %v, depth %d", doc, limit, got, deepest)
			}
		}
	}
}
