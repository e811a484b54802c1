package http

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/simdedge/simdedge/asm"
)

// benchData reads a corpus from the shared data directory beside the
// repository and skips when it is absent.
func benchData(tb testing.TB, name string) []byte {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "shared", "data", "http", name))
	if err != nil {
		tb.Skipf("corpus %s not available: %v", name, err)
	}
	return b
}

// BenchmarkScanPaths compares the two head walkers (scalar word-at-a-time
// and Classify masks) at each asm level, the measurement behind the choice
// in scan.go.
func BenchmarkScanPaths(b *testing.B) {
	inputs := map[string][]byte{
		"kittyhell": benchData(b, "req_kittyhell_703B.txt"),
		"small":     []byte("GET / HTTP/1.1\r\nHost: example.com\r\nUser-Agent: curl/8.5.0\r\nAccept: */*\r\n\r\n"),
	}
	defer func() { forceWalk = walkAuto }()
	for _, name := range []string{"kittyhell", "small"} {
		in := inputs[name]
		for _, lvl := range asm.Levels() {
			for _, m := range []walkMode{walkScalar, walkMasks} {
				mode := map[walkMode]string{walkScalar: "scalar", walkMasks: "masks"}[m]
				b.Run(name+"/"+lvl.String()+"/"+mode, func(b *testing.B) {
					prev := asm.SetLevel(lvl)
					defer asm.SetLevel(prev)
					forceWalk = m
					var req Request
					b.SetBytes(int64(len(in)))
					b.ReportAllocs()
					for b.Loop() {
						if _, err := ParseRequest(in, &req); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}
