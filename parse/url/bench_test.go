package url

import (
	"strconv"
	"strings"
	"testing"
)

// BenchmarkEncode compares the scalar and SIMD percent-encoders by input
// length, for text with no byte to encode ("plain"), one in 16 ("mixed")
// and all (Cyrillic UTF-8, "dense"); simdEncodeMin and denseMin are chosen
// from it.
func BenchmarkEncode(b *testing.B) {
	for _, n := range []int{16, 32, 64, 128, 256, 1024} {
		plain := strings.Repeat("abcdefghijklmnop", n/16)
		mixed := strings.Repeat("abcdefg ijklmnop", n/16)
		dense := strings.Repeat("\u0436\u0436\u0436\u0436 \u0436\u0436\u0436", n/16)
		for _, in := range []struct{ name, s string }{{"plain", plain}, {"mixed", mixed}, {"dense", dense}} {
			dst := make([]byte, 0, 4*n)
			b.Run(in.name+"/"+strconv.Itoa(n)+"/scalar", func(b *testing.B) {
				b.SetBytes(int64(n))
				for b.Loop() {
					dst = appendEncodedScalar(dst[:0], in.s, pathSet)
				}
			})
			b.Run(in.name+"/"+strconv.Itoa(n)+"/simd", func(b *testing.B) {
				b.SetBytes(int64(n))
				for b.Loop() {
					dst = appendEncodedSIMD(dst[:0], in.s, pathSet)
				}
			})
		}
	}
}
