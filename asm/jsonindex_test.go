package asm

import (
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"testing"
)

// checkJSONStructurals runs the twin and every level on cls with carry c
// and pos at offset off, and checks that all agree on the positions, the
// masks and the carry, and that nothing is written outside pos[:64*n] and
// masks[:2*n].
func checkJSONStructurals(t *testing.T, cls []uint64, base uint32, c JSONCarry, off int) {
	t.Helper()
	const guard = 0xdeadbeef
	n := len(cls) / JSONClasses
	room := BlockSize * n
	wantPos := make([]uint32, room)
	wantMasks := make([]uint64, JSONMaskWords*n)
	wantC := c
	var wantN int
	if n > 0 {
		wantN = jsonStructuralsGeneric(wantPos, wantMasks, cls, base, &wantC.s)
	}
	pbuf := make([]uint32, off+room+BlockSize)
	mbuf := make([]uint64, JSONMaskWords*n+1)
	forEachLevel(t, func(l Level) {
		for i := range pbuf {
			pbuf[i] = guard
		}
		for i := range mbuf {
			mbuf[i] = guard
		}
		got := c
		k := JSONStructurals(pbuf[off:off+room:off+room], mbuf[:JSONMaskWords*n], cls, base, &got)
		if k != wantN || !slices.Equal(pbuf[off:off+k], wantPos[:wantN]) {
			t.Fatalf("%v: %d blocks off %d: positions %v, want %v", l, n, off, pbuf[off:off+min(k, room)], wantPos[:wantN])
		}
		if !slices.Equal(mbuf[:JSONMaskWords*n], wantMasks) || mbuf[JSONMaskWords*n] != guard {
			t.Fatalf("%v: %d blocks: masks %x, want %x", l, n, mbuf, wantMasks)
		}
		if got != wantC {
			t.Fatalf("%v: %d blocks: carry %v, want %v", l, n, got, wantC)
		}
		for i, v := range pbuf {
			if (i < off || i >= off+room) && v != guard {
				t.Fatalf("%v: %d blocks off %d: wrote at %d outside pos", l, n, off, i-off)
			}
		}
	})
}

// jsonBlockBytes are the bytes whose classes JSONStructurals combines.
const jsonBlockBytes = "\"\\{}[]:, \t\n\rx1\x00\x1f"

// jsonClassify classifies b as the JSON parser does (JSONClasses order).
var jsonClassTable = MustClassTable(
	func(c byte) bool { return c == '"' },
	func(c byte) bool { return c == '\\' },
	func(c byte) bool { return c == '"' || c == '\\' || c < ' ' },
	func(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' },
	func(c byte) bool { return c == '{' || c == '}' || c == '[' || c == ']' || c == ':' || c == ',' },
)

// TestJSONStructurals compares the kernel with its twin on 0..40 blocks at
// 16 pos alignments, on classified JSON-like text (dense and sparse in the
// bytes that matter, runs of backslashes across block ends included) and
// on random words, with every carry.
func TestJSONStructurals(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	carries := []JSONCarry{{}, {[3]uint64{1, 0, 0}}, {[3]uint64{0, ^uint64(0), 0}}, {[3]uint64{1, ^uint64(0), 1}}, {[3]uint64{0, 0, 1}}}
	for n := 0; n <= 40; n++ {
		for off := 0; off < 16; off++ {
			var cls []uint64
			switch off % 3 {
			case 0, 1: // text
				b := make([]byte, n*BlockSize)
				for i := range b {
					b[i] = 'a'
					if r.IntN(1+off*off) == 0 {
						b[i] = jsonBlockBytes[r.IntN(len(jsonBlockBytes))]
					}
				}
				for i := BlockSize - 3; i < len(b); i += BlockSize { // backslashes across the block end
					for k := range r.IntN(6) {
						if i+k < len(b) {
							b[i+k] = '\\'
						}
					}
				}
				cls = make([]uint64, ClassifiedLen(len(b), JSONClasses))
				Classify(cls, b, jsonClassTable)
			default: // any words
				cls = make([]uint64, n*JSONClasses)
				for i := range cls {
					cls[i] = r.Uint64()
				}
			}
			checkJSONStructurals(t, cls, uint32(r.IntN(1<<20)), carries[r.IntN(len(carries))], off)
		}
	}
}

func TestJSONStructuralsBadLengths(t *testing.T) {
	for _, tc := range []struct{ pos, masks, cls int }{{63, 2, 5}, {64, 1, 5}, {64, 2, 4}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("lengths %v did not panic", tc)
				}
			}()
			var c JSONCarry
			JSONStructurals(make([]uint32, tc.pos), make([]uint64, tc.masks), make([]uint64, tc.cls), 0, &c)
		}()
	}
}

func FuzzJSONStructurals(f *testing.F) {
	f.Add([]byte(`{"a\\"b":"c\\\\","d":[1,2.5e3,-0,true,false,null,"\u00e9"]}`), uint8(0), uint8(0))
	f.Add([]byte(`"\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\"x"`), uint8(3), uint8(1))
	f.Add([]byte{}, uint8(0), uint8(7))
	f.Fuzz(func(t *testing.T, data []byte, off, carry uint8) {
		var cls []uint64
		if len(data) > 0 && data[0]&1 == 1 { // the bytes as mask words
			cls = make([]uint64, (len(data)+8*JSONClasses-1)/(8*JSONClasses)*JSONClasses)
			var w [8]byte
			for i := range cls {
				clear(w[:])
				if 8*i < len(data) {
					copy(w[:], data[8*i:])
				}
				cls[i] = binary.LittleEndian.Uint64(w[:])
			}
		} else { // the bytes as text
			cls = make([]uint64, ClassifiedLen(len(data), JSONClasses))
			Classify(cls, data, jsonClassTable)
		}
		var c JSONCarry
		c.s[0] = uint64(carry & 1)
		c.s[1] = -uint64(carry >> 1 & 1)
		c.s[2] = uint64(carry >> 2 & 1)
		checkJSONStructurals(t, cls, 0, c, int(off)%16)
	})
}

func BenchmarkJSONStructurals(b *testing.B) {
	r := rand.New(rand.NewPCG(13, 14))
	// One 16 KiB window of pretty-printed JSON-like text.
	const item = `{"id": 505874924095815681, "name": "ayuu0123", "tags": ["a", "b"], "ok": true},` + "\n    "
	text := make([]byte, 0, 16<<10)
	for len(text)+len(item) <= cap(text) {
		text = append(text, item[:len(item)-r.IntN(4)]...)
	}
	cls := make([]uint64, ClassifiedLen(len(text), JSONClasses))
	Classify(cls, text, jsonClassTable)
	cls = cls[:len(text)/BlockSize*JSONClasses]
	n := len(cls) / JSONClasses
	pos := make([]uint32, BlockSize*n)
	masks := make([]uint64, JSONMaskWords*n)
	benchLevels(b, n*BlockSize, func(b *testing.B) {
		for b.Loop() {
			var c JSONCarry
			JSONStructurals(pos, masks, cls, 0, &c)
		}
	})
}
