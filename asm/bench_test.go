package asm

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"unsafe"
)

// Benchmarks are named Benchmark<Kernel>/<bytes>/<level> so that benchstat
// can compare levels side by side, e.g.
//
//	go test -run - -bench . -count 10 ./asm | benchstat -col /level -

var benchSizes = []int{64, 256, 4096}

func benchLevels(b *testing.B, size int, f func(b *testing.B)) {
	for _, l := range Levels() {
		b.Run(fmt.Sprintf("%d/level=%v", size, l), func(b *testing.B) {
			prev := SetLevel(l)
			defer SetLevel(prev)
			b.SetBytes(int64(size))
			b.ReportAllocs()
			reportCPU(b, func() { f(b) })
		})
	}
}

// benchText is printable ASCII without tabs or newlines, so the scans run
// to the end, with upper-case letters for ToLower to change.
func benchText(n int) []byte {
	r := rand.New(rand.NewPCG(7, 8))
	b := make([]byte, n)
	for i := range b {
		b[i] = 0x20 + byte(r.IntN(0x5f))
	}
	return b
}

func BenchmarkClassify(b *testing.B) {
	tab := MustClassTable(testTables["http"]...)
	for _, n := range benchSizes {
		src := benchText(n)
		dst := make([]uint64, ClassifiedLen(n, tab.Classes()))
		benchLevels(b, n, func(b *testing.B) {
			for b.Loop() {
				Classify(dst, src, tab)
			}
		})
	}
}

func BenchmarkIndexTabNewline(b *testing.B) {
	for _, n := range benchSizes {
		src := benchText(n)
		benchLevels(b, n, func(b *testing.B) {
			for b.Loop() {
				if IndexTabNewline(src) >= 0 {
					b.Fatal("unexpected match")
				}
			}
		})
	}
}

func BenchmarkIndexControlOrNonASCII(b *testing.B) {
	for _, n := range benchSizes {
		src := benchText(n)
		benchLevels(b, n, func(b *testing.B) {
			for b.Loop() {
				if IndexControlOrNonASCII(src) >= 0 {
					b.Fatal("unexpected match")
				}
			}
		})
	}
}

func BenchmarkToLower(b *testing.B) {
	for _, n := range benchSizes {
		src := benchText(n)
		dst := make([]byte, n)
		benchLevels(b, n, func(b *testing.B) {
			for b.Loop() {
				ToLower(dst, src)
			}
		})
	}
}

// benchPrefix measures one prefix-sum kernel over len(benchSizes) inputs of
// the same byte size whatever the lane width, so GB/s compare across widths.
func benchPrefix[T uint8 | uint16 | uint32](b *testing.B, f func(dst, src []T, carry T) T) {
	var lane T
	w := int(unsafe.Sizeof(lane))
	for _, n := range benchSizes {
		src := make([]T, n/w)
		dst := make([]T, n/w)
		for i := range src {
			src[i] = T(i * 7)
		}
		benchLevels(b, n, func(b *testing.B) {
			for b.Loop() {
				f(dst, src, 0)
			}
		})
	}
}

func BenchmarkPrefixSum8(b *testing.B)           { benchPrefix(b, PrefixSum8) }
func BenchmarkPrefixSum16(b *testing.B)          { benchPrefix(b, PrefixSum16) }
func BenchmarkPrefixSum32(b *testing.B)          { benchPrefix(b, PrefixSum32) }
func BenchmarkExclusivePrefixSum32(b *testing.B) { benchPrefix(b, ExclusivePrefixSum32) }
