package http

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/simdedge/simdedge/asm"
)

// benchData reads a corpus from the shared data directory beside the
// repository ($SIMDEDGE_DATA, as bench/micro reads it, for a worktree
// elsewhere) and skips when it is absent.
func benchData(tb testing.TB, name string) []byte {
	tb.Helper()
	dir := os.Getenv("SIMDEDGE_DATA")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "shared", "data")
	}
	b, err := os.ReadFile(filepath.Join(dir, "http", name))
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

// BenchmarkPhases times the stages of ParseRequest on the 703-byte corpus
// request at each asm level, each stage alone over the same input, so a
// profile's split can be checked against stand-alone costs:
//
//	classify  asm.Classify of the head (what scanner.init and its refills do)
//	line      the request line: scanner.init plus Parser.requestLine
//	fields    the field lines, on a scanner already holding the first window
//	frame     Request.frame on the framing the fields produced
//	all       ParseRequest whole
func BenchmarkPhases(b *testing.B) {
	in := benchData(b, "req_kittyhell_703B.txt")
	p := defaultParser
	for _, lvl := range asm.Levels() {
		prev := asm.SetLevel(lvl)
		var req Request
		req.Reset()
		req.scan.init(in)
		pos, err := p.requestLine(&req.scan, false, &req)
		if err != nil {
			b.Fatal(err)
		}
		var f framing
		if _, err := p.parseFields(&req.scan, pos, false, &req.Headers, &f); err != nil {
			b.Fatal(err)
		}
		asm.SetLevel(prev)
		run := func(name string, fn func()) {
			b.Run(lvl.String()+"/"+name, func(b *testing.B) {
				prev := asm.SetLevel(lvl)
				defer asm.SetLevel(prev)
				b.SetBytes(int64(len(in)))
				start := processCPU()
				for b.Loop() {
					fn()
				}
				b.ReportMetric(float64(processCPU()-start)/float64(b.N), "cpu-ns/op")
			})
		}
		var m [64]uint64
		run("classify", func() { asm.Classify(m[:], in, headTable) })
		var r2 Request
		run("line", func() {
			r2.scan.init(in)
			if _, err := p.requestLine(&r2.scan, false, &r2); err != nil {
				b.Fatal(err)
			}
		})
		run("fields", func() {
			var f framing
			r2.Headers = r2.Headers[:0]
			if _, err := p.parseFields(&req.scan, pos, false, &r2.Headers, &f); err != nil {
				b.Fatal(err)
			}
		})
		run("frame", func() {
			if err := r2.frame(&f, false); err != nil {
				b.Fatal(err)
			}
		})
		run("all", func() {
			if _, err := p.ParseRequest(in, &r2); err != nil {
				b.Fatal(err)
			}
		})
	}
}

// BenchmarkHeadWithBody parses a 90-byte head followed by bodies of several
// sizes, the case that bounds how many bytes the first Classify call may
// cover (scan.go): every byte classified past the head is wasted.
func BenchmarkHeadWithBody(b *testing.B) {
	head := "POST /upload HTTP/1.1\r\nHost: example.com\r\nContent-Length: %d\r\nContent-Type: text/plain\r\n\r\n"
	for _, n := range []int{0, 400, 900, 4096} {
		in := []byte(fmt.Sprintf(head, n) + strings.Repeat("x", n))
		parseAtLevels(b, fmt.Sprintf("body%d", n), in)
	}
}

// BenchmarkFieldLines splits a parse's cost into what every request pays
// and what each field line adds: the corpus request's line and Host field
// followed by n identical 71-byte field lines (n = 0, 4, 12), at each asm
// level. The n = 0 head is the fixed cost; the slope, the cost a line.
func BenchmarkFieldLines(b *testing.B) {
	line := "X-Abcdefghij: " + strings.Repeat("v", 55) + "\r\n"
	for _, n := range []int{0, 4, 12} {
		in := []byte("GET /wp-content/uploads/2010/03/hello-kitty-darth-vader-pink.jpg HTTP/1.1\r\n" +
			"Host: www.kittyhell.com\r\n" + strings.Repeat(line, n) + "\r\n")
		parseAtLevels(b, fmt.Sprintf("lines%d", n), in)
	}
}

// parseAtLevels runs a sub-benchmark named name/LEVEL of ParseRequest on
// in at each asm level, reporting CPU time per parse beside wall time.
func parseAtLevels(b *testing.B, name string, in []byte) {
	for _, lvl := range asm.Levels() {
		b.Run(name+"/"+lvl.String(), func(b *testing.B) {
			prev := asm.SetLevel(lvl)
			defer asm.SetLevel(prev)
			var req Request
			b.SetBytes(int64(len(in)))
			start := processCPU()
			for b.Loop() {
				if _, err := ParseRequest(in, &req); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(processCPU()-start)/float64(b.N), "cpu-ns/op")
		})
	}
}
