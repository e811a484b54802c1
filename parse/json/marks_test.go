package json

import (
	"math/rand/v2"
	"testing"

	"github.com/simdedge/simdedge/asm"
)

// TestMarks checks nextStop and nextNonSpace against byte loops from every
// position of inputs longer than two windows, dense and sparse in stops and
// whitespace (so scans cross 64-byte blocks and window ends), at every asm
// level that has SIMD kernels.
func TestMarks(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	isStop := func(c byte) bool { return c == '"' || c == '\\' || c < ' ' }
	for _, l := range asm.Levels() {
		if l == asm.Generic {
			continue
		}
		prev := asm.SetLevel(l)
		for _, density := range []int{2, 50, 3000, 40000} {
			for _, n := range []int{1, 63, 64, 65, markWindow, markWindow + 1, 2*markWindow + 77} {
				b := make([]byte, n)
				for i := range b {
					b[i] = 'a'
					if r.IntN(2) == 0 {
						b[i] = ' '
					}
					if r.IntN(density) == 0 {
						b[i] = "\"\\\x01\x1f\n\t\r \xc3"[r.IntN(9)]
					}
				}
				var m marks
				m.reset(b)
				for i := 0; i <= n; i++ {
					want := i
					for want < n && !isStop(b[want]) {
						want++
					}
					if got := m.nextStop(i); got != want {
						t.Fatalf("%v density %d len %d: nextStop(%d) = %d, want %d", l, density, n, i, got, want)
					}
				}
				m.reset(b)
				for i := 0; i <= n; i++ {
					want := i
					for want < n && isSpace[b[want]] {
						want++
					}
					if got := m.nextNonSpace(i); got != want {
						t.Fatalf("%v density %d len %d: nextNonSpace(%d) = %d, want %d", l, density, n, i, got, want)
					}
				}
			}
		}
		asm.SetLevel(prev)
	}
}
