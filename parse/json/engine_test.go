package json

import "testing"

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

func TestSetEngine(t *testing.T) {
	for _, e := range Engines() {
		prev := SetEngine(e)
		if got := NewParser(Options{}).Engine(); got != e {
			t.Errorf("SetEngine(%v): parser uses %v", e, got)
		}
		SetEngine(prev)
	}
	prev := SetEngine(EngineSIMD)
	if !simdAvailable && DefaultEngine() != EnginePureGo {
		t.Errorf("SetEngine(simd) without simd: %v", DefaultEngine())
	}
	SetEngine(prev)
}
