package asm

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// refJSONIndex is JSONIndex byte by byte, the oracle of the kernels and of
// their twin: the escape, string and scalar states follow each byte in
// turn, with the bytes past the end of src (to the end of its last block)
// read as whitespace.
func refJSONIndex(src []byte, base uint32, c JSONCarry) (pos []uint32, masks []uint64, _ JSONCarry) {
	n := (len(src) + BlockSize - 1) / BlockSize
	masks = make([]uint64, JSONMaskWords*n)
	esc, inStr, scalarRun := c.s[0]&1 != 0, c.s[1] != 0, c.s[2]&1 != 0
	dirty := inStr && c.s[3]&1 == 0 // a special since the opening quote
	for i := range n * BlockSize {
		b := byte(jsonPad)
		if i < len(src) {
			b = src[i]
		}
		escaped := esc
		esc = b == '\\' && !escaped
		quote := b == '"' && !escaped
		if quote {
			inStr = !inStr
		}
		special := b == '\\' || b < 0x20
		bit, k := uint64(1)<<(i%BlockSize), i/BlockSize*JSONMaskWords
		if special || b == '"' {
			masks[k+JSONStops] |= bit
		}
		switch {
		case quote && inStr:
			dirty = false
		case quote && !dirty:
			masks[k+JSONPlainEnds] |= bit
		case special && inStr:
			dirty = true
		}
		op := strings.IndexByte("{}[]:,", b) >= 0
		scalar := !(op || quote || inStr || strings.IndexByte(" \t\n\r", b) >= 0)
		if op && !inStr || quote && inStr || scalar && !scalarRun {
			pos = append(pos, base+uint32(i))
		}
		scalarRun = scalar
	}
	var out JSONCarry
	if esc {
		out.s[0] = 1
	}
	if inStr {
		out.s[1] = ^uint64(0)
	}
	if scalarRun {
		out.s[2] = 1
	}
	if inStr && !dirty {
		out.s[3] = 1
	}
	return pos, masks, out
}

// forEachJSONKernel is forEachLevel for JSONIndex: at the AVX-512 level it
// runs f once per AVX-512 kernel, without and (where the CPU has it) with
// VBMI2.
func forEachJSONKernel(t testing.TB, f func(kernel string)) {
	prev := jsonVBMI2
	defer func() { jsonVBMI2 = prev }()
	forEachLevel(t, func(l Level) {
		jsonVBMI2 = false
		f(l.String())
		if l == AVX512 && detectVBMI2() {
			jsonVBMI2 = true
			f("avx512-vbmi2")
		}
	})
}

// checkJSONIndex runs every level on src with carry c and pos at offset
// off, and checks that all agree with refJSONIndex on the positions, the
// masks and the carry, and that nothing is written outside pos[:64*n] and
// masks[:2*n].
func checkJSONIndex(t *testing.T, src []byte, base uint32, c JSONCarry, off int) {
	t.Helper()
	const guard = 0xdeadbeef
	wantPos, wantMasks, wantC := refJSONIndex(src, base, c)
	n := len(wantMasks) / JSONMaskWords
	room := BlockSize * n
	pbuf := make([]uint32, off+room+BlockSize)
	mbuf := make([]uint64, JSONMaskWords*n+1)
	forEachJSONKernel(t, func(l string) {
		for i := range pbuf {
			pbuf[i] = guard
		}
		for i := range mbuf {
			mbuf[i] = guard
		}
		got := c
		k := JSONIndex(pbuf[off:off+room:off+room], mbuf[:JSONMaskWords*n], src, base, &got)
		if k != len(wantPos) || !slices.Equal(pbuf[off:off+k], wantPos) {
			t.Fatalf("%v: %d bytes off %d: positions %v, want %v", l, len(src), off, pbuf[off:off+min(k, room)], wantPos)
		}
		if !slices.Equal(mbuf[:JSONMaskWords*n], wantMasks) || mbuf[JSONMaskWords*n] != guard {
			t.Fatalf("%v: %d bytes: masks %x, want %x", l, len(src), mbuf, wantMasks)
		}
		if got != wantC {
			t.Fatalf("%v: %d bytes: carry %v, want %v", l, len(src), got, wantC)
		}
		for i, v := range pbuf {
			if (i < off || i >= off+room) && v != guard {
				t.Fatalf("%v: %d bytes off %d: wrote at %d outside pos", l, len(src), off, i-off)
			}
		}
	})
}

// jsonBlockBytes are the bytes whose classes JSONIndex tells apart, with
// the bytes that a nibble lookup could confuse with them (0x0c and 0x1a
// fold onto ',' and ':', '+' and ';' share low nibbles, and bytes with bit
// 7 set).
const jsonBlockBytes = "\"\\{}[]:, \t\n\rx1\x00\x1f\x0c\x1a\x0b+;\x2a\x80\xac\xba\xfb\xa0\x7f"

// jsonText returns n bytes of JSON-like text: mostly 'a', with one byte in
// 1+density*density from jsonBlockBytes, and runs of backslashes across
// block ends.
func jsonText(r *rand.Rand, n, density int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = 'a'
		if r.IntN(1+density*density) == 0 {
			b[i] = jsonBlockBytes[r.IntN(len(jsonBlockBytes))]
		}
	}
	for i := BlockSize - 3; i < len(b); i += BlockSize {
		for k := range r.IntN(6) {
			if i+k < len(b) {
				b[i+k] = '\\'
			}
		}
	}
	return b
}

var jsonCarries = []JSONCarry{{}, {[4]uint64{1, 0, 0, 0}}, {[4]uint64{0, ^uint64(0), 0, 0}}, {[4]uint64{1, ^uint64(0), 1, 0}}, {[4]uint64{0, 0, 1, 0}},
	{[4]uint64{0, ^uint64(0), 0, 1}}, {[4]uint64{1, ^uint64(0), 0, 1}}}

// TestJSONIndex compares every level with refJSONIndex at every length
// 0..maxTestLen and then every multiple of 61 to 40 blocks, at every
// alignment of src (mod 16) and 16 alignments of pos, on JSON-like text
// dense and sparse in the bytes that matter, with every carry; and on
// every byte value in every lane.
func TestJSONIndex(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	buf := make([]byte, 40*BlockSize+16)
	for n := 0; n <= 40*BlockSize; n++ {
		if n > maxTestLen && n%61 != 0 {
			continue
		}
		align := n % 16
		src := buf[align : align+n]
		copy(src, jsonText(r, n, n%5))
		checkJSONIndex(t, src, uint32(r.IntN(1<<20)), jsonCarries[r.IntN(len(jsonCarries))], n%16)
	}
	for b := range 256 {
		src := []byte(strings.Repeat(`"a\b,c`, 2*BlockSize/6+1))[:2*BlockSize]
		for i := range src {
			if i%3 == b%3 {
				src[i] = byte(b)
			}
		}
		checkJSONIndex(t, src, 0, JSONCarry{}, 0)
	}
}

// TestJSONIndexParts checks that indexing a document in parts of whole
// blocks, passing the carry on, gives the positions of one call, as
// parse/json's windows do.
func TestJSONIndexParts(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	src := jsonText(r, 10*BlockSize+17, 2)
	forEachJSONKernel(t, func(l string) {
		var c JSONCarry
		want := make([]uint32, 11*BlockSize)
		wantMasks := make([]uint64, 11*JSONMaskWords)
		want = want[:JSONIndex(want, wantMasks, src, 0, &c)]
		c = JSONCarry{}
		var got []uint32
		masks := make([]uint64, 11*JSONMaskWords)
		for w := 0; w < len(src); w += 3 * BlockSize {
			part := src[w:min(w+3*BlockSize, len(src))]
			p := make([]uint32, 3*BlockSize)
			got = append(got, p[:JSONIndex(p, masks[w/BlockSize*JSONMaskWords:], part, uint32(w), &c)]...)
		}
		if !slices.Equal(got, want) || !slices.Equal(masks, wantMasks) {
			t.Fatalf("%v: in parts %v, want %v", l, got, want)
		}
	})
}

func TestJSONIndexBadLengths(t *testing.T) {
	for _, tc := range []struct{ pos, masks, src int }{{63, 2, 64}, {64, 1, 64}, {64, 2, 65}, {127, 4, 65}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("lengths %v did not panic", tc)
				}
			}()
			var c JSONCarry
			JSONIndex(make([]uint32, tc.pos), make([]uint64, tc.masks), make([]byte, tc.src), 0, &c)
		}()
	}
}

func FuzzJSONIndex(f *testing.F) {
	f.Add([]byte(`{"a\\"b":"c\\\\","d":[1,2.5e3,-0,true,false,null,"\u00e9"]}`), uint8(0), uint8(0))
	f.Add([]byte(`"\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\"x"`), uint8(3), uint8(1))
	f.Add([]byte{}, uint8(0), uint8(7))
	f.Add([]byte(`ab":"c\"d",`), uint8(0), uint8(10)) // inside a plain string
	f.Fuzz(func(t *testing.T, data []byte, off, carry uint8) {
		var c JSONCarry
		c.s[0] = uint64(carry & 1)
		c.s[1] = -uint64(carry >> 1 & 1)
		c.s[2] = uint64(carry >> 2 & 1)
		// A plain run goes on only inside a string.
		c.s[3] = uint64(carry >> 3 & carry >> 1 & 1)
		checkJSONIndex(t, data, 0, c, int(off)%16)
	})
}

func BenchmarkJSONIndex(b *testing.B) {
	r := rand.New(rand.NewPCG(13, 14))
	// One 16 KiB window of pretty-printed JSON-like text.
	const item = `{"id": 505874924095815681, "name": "ayuu0123", "tags": ["a", "b"], "ok": true},` + "\n    "
	text := make([]byte, 0, 16<<10)
	for len(text)+len(item) <= cap(text) {
		text = append(text, item[:len(item)-r.IntN(4)]...)
	}
	text = text[:len(text)&^(BlockSize-1)]
	n := len(text) / BlockSize
	pos := make([]uint32, BlockSize*n)
	masks := make([]uint64, JSONMaskWords*n)
	benchLevels(b, len(text), func(b *testing.B) {
		for b.Loop() {
			var c JSONCarry
			JSONIndex(pos, masks, text, 0, &c)
		}
	})
}
