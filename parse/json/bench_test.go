package json

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// sharedJSON loads a corpus from ../shared/data/json, skipping when absent.
func sharedJSON(tb testing.TB, name string) []byte {
	tb.Helper()
	b := sharedJSONOptional(name)
	if b == nil {
		tb.Skipf("corpus %s not available", name)
	}
	return b
}

// sharedJSONOptional loads a corpus like sharedJSON, or returns nil.
func sharedJSONOptional(name string) []byte {
	dir := os.Getenv("SIMDEDGE_DATA")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "shared", "data")
	}
	b, err := os.ReadFile(filepath.Join(dir, "json", name))
	if err != nil {
		return nil
	}
	return b
}

func BenchmarkParse(b *testing.B) {
	for _, name := range []string{"twitter.json", "citm_catalog.json", "canada.json"} {
		data := sharedJSON(b, name)
		for _, e := range Engines() {
			b.Run(name+"/"+e.String(), func(b *testing.B) {
				p := NewParser(Options{Engine: e})
				b.SetBytes(int64(len(data)))
				b.ReportAllocs()
				defer reportCPU(b, cpuTime())
				for b.Loop() {
					if _, err := p.Parse(data); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkSmall measures both engines on small bodies, to place
// simdMinLen and marksMinLen: below them the simd engine's and the marks'
// fixed costs per call lose. Both thresholds are lowered to 0 here, so
// the rows compare the paths at every size.
func BenchmarkSmall(b *testing.B) {
	const item = `{"id":505874924095815681,"name":"ayuu0123","tags":["a","b"],"ok":true,"score":1.5},`
	for _, size := range []int{128, 512, 1024, 2048, 4096, 16384} {
		doc := []byte("[")
		for len(doc)+len(item) < size {
			doc = append(doc, item...)
		}
		doc = append(doc[:len(doc)-1], ']')
		for _, e := range Engines() {
			for _, noMarks := range []bool{false, true} {
				name := fmt.Sprintf("%d/%v", size, e)
				if noMarks {
					if e != EnginePureGo || !useMarks() {
						continue
					}
					name += "_nomarks" // the word loops, for marks.go's decision
				}
				b.Run(name, func(b *testing.B) {
					p := NewParser(Options{Engine: e})
					p.doc.simdMin, p.doc.marksMin = 0, 0
					p.doc.noMarks = noMarks
					b.SetBytes(int64(len(doc)))
					b.ReportAllocs()
					defer reportCPU(b, cpuTime())
					for b.Loop() {
						if _, err := p.Parse(doc); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}
