package compress

import (
	"bytes"
	stdgzip "compress/gzip"
	"io"
	"os"
	"testing"
)

// benchFile is the 64 KiB JSON the speed target names: the first
// 65536 bytes of twitter.json (cut, not padded) from ../shared/data.
const benchFile = "../../../shared/data/json/twitter.json"

const benchSize = 64 << 10

func loadBench(b *testing.B) []byte {
	data, err := os.ReadFile(benchFile)
	if err != nil || len(data) < benchSize {
		b.Skipf("%s not available (../shared/data): %v", benchFile, err)
	}
	return data[:benchSize]
}

// BenchmarkEncode compresses the file with each pooled encoder as a
// response would (take from the pool, Reset, Write, Close, Release), and
// with the standard library's gzip at the same level beside it.
//
//	go test -run - -bench Encode -count 10 ./server/compress | benchstat -
func BenchmarkEncode(b *testing.B) {
	data := loadBench(b)
	for _, tc := range []struct {
		name   string
		coding string
		level  int
	}{
		{"gzip5", "gzip", 5},
		{"br4", "br", 4},
		{"zstd3", "zstd", 3},
	} {
		b.Run("twitter64k/"+tc.name, func(b *testing.B) {
			p, err := New(Options{Encodings: []string{tc.coding}, Levels: map[string]int{tc.coding: tc.level}})
			if err != nil {
				b.Fatal(err)
			}
			var out bytes.Buffer
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				out.Reset()
				enc := p.Encoder([]byte(tc.coding))
				enc.Reset(&out)
				enc.Write(data)
				enc.Close()
				enc.Release()
			}
			b.ReportMetric(float64(out.Len())/float64(len(data)), "ratio")
		})
	}
	b.Run("twitter64k/stdlib-gzip5", func(b *testing.B) {
		zw, _ := stdgzip.NewWriterLevel(io.Discard, 5)
		var out bytes.Buffer
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			out.Reset()
			zw.Reset(&out)
			zw.Write(data)
			zw.Close()
		}
		b.ReportMetric(float64(out.Len())/float64(len(data)), "ratio")
	})
}
