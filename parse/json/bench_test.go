package json

import (
	"os"
	"path/filepath"
	"testing"
)

// sharedJSON loads a corpus from ../shared/data/json, skipping when absent.
func sharedJSON(tb testing.TB, name string) []byte {
	tb.Helper()
	dir := os.Getenv("SIMDEDGE_DATA")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "shared", "data")
	}
	b, err := os.ReadFile(filepath.Join(dir, "json", name))
	if err != nil {
		tb.Skipf("corpus %s not available: %v", name, err)
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
				for b.Loop() {
					if _, err := p.Parse(data); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
