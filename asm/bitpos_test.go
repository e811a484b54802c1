package asm

import (
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"testing"
)

// refBitPositions is the naive reference: one bit test per position.
func refBitPositions(masks []uint64, base uint32) []uint32 {
	out := []uint32{}
	for k, w := range masks {
		for j := 0; j < BlockSize; j++ {
			if w>>j&1 != 0 {
				out = append(out, base+uint32(k*BlockSize+j))
			}
		}
	}
	return out
}

// checkBitPositions runs the twin and every level on masks with dst at
// offset off (so stores see every alignment of a 64-byte line), and checks
// the result against the reference and that nothing was written outside
// dst[:64*len(masks)].
func checkBitPositions(t *testing.T, masks []uint64, base uint32, off int) {
	t.Helper()
	const guard = 0xdeadbeef
	want := refBitPositions(masks, base)
	room := BlockSize * len(masks)
	buf := make([]uint32, off+room+BlockSize)
	run := func(name string, f func(dst []uint32) int) {
		for i := range buf {
			buf[i] = guard
		}
		dst := buf[off : off+room : off+room]
		n := f(dst)
		if n != len(want) || !slices.Equal(dst[:n], want) {
			t.Fatalf("%s: %d masks base %d off %d: got %d positions %v, want %d %v", name, len(masks), base, off, n, dst[:min(n, room)], len(want), want)
		}
		for i, v := range buf {
			if (i < off || i >= off+room) && v != guard {
				t.Fatalf("%s: %d masks off %d: wrote at %d outside dst", name, len(masks), off, i-off)
			}
		}
	}
	if len(masks) > 0 {
		run("generic", func(dst []uint32) int { return bitPositionsGeneric(dst, masks, base) })
	}
	forEachLevel(t, func(l Level) {
		run(l.String(), func(dst []uint32) int { return BitPositions(dst, masks, base) })
	})
}

// TestBitPositions covers 0..40 mask words at every dst alignment (0..15
// lanes), with masks of every density: empty, single bits at the edges,
// sparse, dense, full, and the counts around the AVX2 kernel's unrolled
// eight.
func TestBitPositions(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	fills := map[string]func() uint64{
		"zero": func() uint64 { return 0 },
		"full": func() uint64 { return ^uint64(0) },
		"edges": func() uint64 {
			return []uint64{1, 1 << 63, 1<<63 | 1, 1 << 15, 1 << 16, 0xffff, 0xffff << 48}[r.IntN(7)]
		},
		"sparse": func() uint64 { a, b := r.IntN(64), r.IntN(64); return 1<<a | 1<<b },
		"random": func() uint64 { return r.Uint64() },
		"around8": func() uint64 {
			var w uint64
			for range 7 + r.IntN(3) { // 7, 8 or 9 bits (fewer if they collide)
				w |= 1 << r.IntN(64)
			}
			return w
		},
	}
	for name, fill := range fills {
		t.Run(name, func(t *testing.T) {
			for n := 0; n <= 40; n++ {
				masks := make([]uint64, n)
				for i := range masks {
					masks[i] = fill()
				}
				for off := 0; off < 16; off++ {
					checkBitPositions(t, masks, uint32(r.IntN(1<<20)), off)
				}
			}
		})
	}
}

func TestBitPositionsShortDst(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("BitPositions with a short dst did not panic")
		}
	}()
	BitPositions(make([]uint32, 63), []uint64{1}, 0)
}

func FuzzBitPositions(f *testing.F) {
	f.Add([]byte{0xff, 0, 0, 0, 0, 0, 0, 0x80, 1}, uint8(0), uint32(0))
	f.Add(slices.Repeat([]byte{0xff}, 64), uint8(5), uint32(1<<30))
	f.Add([]byte{}, uint8(0), uint32(7))
	f.Fuzz(func(t *testing.T, data []byte, off uint8, base uint32) {
		masks := make([]uint64, (len(data)+7)/8)
		var w [8]byte
		for i := range masks {
			clear(w[:])
			copy(w[:], data[8*i:])
			masks[i] = binary.LittleEndian.Uint64(w[:])
		}
		base %= 1 << 31 // positions must fit in uint32
		checkBitPositions(t, masks, base, int(off)%16)
	})
}

func BenchmarkBitPositions(b *testing.B) {
	r := rand.New(rand.NewPCG(9, 10))
	masks := make([]uint64, 256) // one 16 KiB window of blocks
	for i := range masks {
		// About six bits per word, as in twitter.json's structural index.
		for range 6 {
			masks[i] |= 1 << r.IntN(64)
		}
	}
	dst := make([]uint32, BlockSize*len(masks))
	benchLevels(b, len(masks)*8, func(b *testing.B) {
		for b.Loop() {
			BitPositions(dst, masks, 0)
		}
	})
}
