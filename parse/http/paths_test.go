package http

import (
	"testing"

	"github.com/simdedge/simdedge/asm"
)

// validTargetRef is validTarget's definition, one byte at a time.
func validTargetRef(t []byte) bool {
	for _, b := range t {
		if !isTargetByte(b) {
			return false
		}
	}
	return true
}

// TestValidTargetPaths checks validTarget at every asm level (vector scans
// above targetKernelMin, the word loop below) and the word loop itself
// against the per-byte definition: every length up to a few blocks, every
// start alignment, and each byte value at the first, a middle and the last
// position.
func TestValidTargetPaths(t *testing.T) {
	buf := make([]byte, 200)
	for _, lvl := range asm.Levels() {
		prev := asm.SetLevel(lvl)
		for off := 0; off < 8; off++ {
			for n := 0; n+off <= len(buf) && n <= 150; n++ {
				for i := range buf {
					buf[i] = 'a' + byte(i%26)
				}
				in := buf[off : off+n]
				check := func() {
					t.Helper()
					want := validTargetRef(in)
					if got := validTarget(in); got != want {
						t.Fatalf("%v: validTarget(%q) = %v, want %v", lvl, in, got, want)
					}
					if got := validTargetWords(in); got != want {
						t.Fatalf("validTargetWords(%q) = %v, want %v", in, got, want)
					}
				}
				check()
				if n == 0 {
					continue
				}
				for _, at := range []int{0, n / 2, n - 1} {
					for b := 0; b < 256; b++ {
						old := in[at]
						in[at] = byte(b)
						check()
						in[at] = old
					}
				}
			}
		}
		asm.SetLevel(prev)
	}
}
