package json

import (
	"strings"
	"testing"
)

// TestEngineSelected checks that each engine really produced the document:
// the simd engine stores numbers converted ('l'), the pure-Go engine as text.
func TestEngineSelected(t *testing.T) {
	for _, p := range engineParsers(Options{}) {
		doc, err := p.Parse([]byte(`[1]`))
		if err != nil {
			t.Fatal(err)
		}
		tag := tagOf(doc.tape[2])
		want := byte(tagNumber)
		if p.Engine() == EngineSIMD {
			want = tagInt
		}
		if tag != want {
			t.Errorf("%v: number tag %q, want %q", p.Engine(), tag, want)
		}
	}
	if DefaultEngine() == EngineSIMD && !simdAvailable {
		t.Error("simd engine chosen where unavailable")
	}
}

func TestHexTable(t *testing.T) {
	for c := 0; c < 256; c++ {
		if hexVal[c] != hexDigit(byte(c)) {
			t.Fatalf("hexVal[%#x]", c)
		}
		if isSpace[c] != jsonSpace(byte(c)) {
			t.Fatalf("isSpace[%#x]", c)
		}
	}
}

// TestSpecialMask compares the SWAR string scan with a byte loop at every
// position of a word.
func TestSpecialMask(t *testing.T) {
	special := func(c byte) bool { return c == '"' || c == '\\' || c < 0x20 }
	for c := 0; c < 256; c++ {
		for pos := 0; pos < wordBytes; pos++ {
			var w [wordBytes]byte
			for i := range w {
				w[i] = 'a'
			}
			w[pos] = byte(c)
			var x uint64
			for i := wordBytes - 1; i >= 0; i-- {
				x = x<<8 | uint64(w[i])
			}
			m := specialMask(x)
			if special(byte(c)) != (m != 0) {
				t.Fatalf("byte %#x at %d: mask %#x", c, pos, m)
			}
		}
	}
}

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
