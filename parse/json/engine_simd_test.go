//go:build amd64 && !purego && !noasm

package json

import (
	"bytes"
	"math/rand/v2"
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

// refEscapesValid is the walk escapesValid replaced: visit every
// backslash from the start, pairing each with its escape.
func refEscapesValid(m []byte) bool {
	for i := 0; i < len(m); {
		k := bytes.IndexByte(m[i:], '\\')
		if k < 0 {
			return true
		}
		i += k
		if i+1 < len(m) && m[i+1] == 'u' {
			n, err := checkEscape(m, i)
			if err != nil {
				return false
			}
			i += n
			continue
		}
		i += 2
	}
	return true
}

// TestEscapesValid checks the "\u" search of the simd engine's escape
// check against the backslash-by-backslash walk, on random strings of
// backslashes, u, hex digits and surrogate halves.
func TestEscapesValid(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	atoms := []string{`\`, `\\`, `u`, `\u`, `0`, `d8`, `00`, `dc`, `41`, `g`, `"`, `a`}
	for range 200000 {
		var b []byte
		for range r.IntN(12) {
			b = append(b, atoms[r.IntN(len(atoms))]...)
		}
		if got, want := escapesValid(b), refEscapesValid(b); got != want {
			t.Fatalf("escapesValid(%q) = %v, want %v", b, got, want)
		}
	}
}
