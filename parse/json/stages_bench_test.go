package json

import (
	"testing"

	"github.com/simdedge/simdedge/asm"
)

// BenchmarkStages times the pure-Go engine's stages on twitter.json, at each
// asm level with SIMD kernels, to show where a parse spends its time
// (bench/results/parsers-json-*.md):
//
//	utf8         asm.ValidUTF8 over the document (marksFor)
//	marks        the marks engine's classification, window by window
//	index        the structural index (index.go), including its classify
//	tape_index   the second stage over a built index (build_index.go)
//	tape_marks   the marks engine's state machine (buildTape)
//	parse        the whole Parse
//	parse_eager  Parse with Options.Eager (numbers and escaped strings
//	             converted in the parse, as simdjson does)
//	numbers      converting every number of the tape (Float), the work
//	             simdjson does in its tape stage and this package defers
//	strings      unescaping every string into a buffer (AppendString),
//	             also done by simdjson and deferred here
func BenchmarkStages(b *testing.B) {
	data := sharedJSON(b, "twitter.json")
	for _, level := range asm.Levels() {
		if level == asm.Generic {
			continue
		}
		prev := asm.SetLevel(level)
		run := func(name string, f func()) {
			b.Run(level.String()+"/"+name, func(b *testing.B) {
				f()
				b.SetBytes(int64(len(data)))
				b.ReportAllocs()
				defer reportCPU(b, cpuTime())
				for b.Loop() {
					f()
				}
			})
		}
		p := NewParser(Options{})
		doc, err := p.Parse(data)
		if err != nil {
			b.Fatal(err)
		}
		run("utf8", func() { asm.ValidUTF8(data) })
		var m marks
		run("marks", func() {
			m.reset(data)
			for i := 0; i < len(data); i += markWindow {
				m.refill(i)
			}
		})
		var x index
		x.build(data) // for tape_index, also when index is filtered out
		run("index", func() { x.build(data) })
		var tape []uint64
		var stack []int
		run("tape_index", func() {
			var ok bool
			if tape, stack, ok = buildIndexed(tape[:0], stack[:0], data, &x, DefaultMaxDepth, nil); !ok {
				b.Fatal("index stage gave up")
			}
		})
		run("tape_marks", func() {
			m.reset(data)
			if tape, stack, _, err = buildTape(tape[:0], stack[:0], data, false, DefaultMaxDepth, false, &m); err != nil {
				b.Fatal(err)
			}
		})
		run("parse", func() {
			if _, err := p.Parse(data); err != nil {
				b.Fatal(err)
			}
		})
		pe := NewParser(Options{Eager: true})
		run("parse_eager", func() {
			if _, err := pe.Parse(data); err != nil {
				b.Fatal(err)
			}
		})
		doc, _ = p.Parse(data)
		var sum float64
		run("numbers", func() {
			for i := 1; i < len(doc.tape); i++ {
				if tagOf(doc.tape[i]) == tagNumber {
					f, _ := Value{d: doc, i: i}.Float()
					sum += f
					i++
				}
			}
		})
		var buf []byte
		run("strings", func() {
			buf = buf[:0]
			for i := 1; i < len(doc.tape); i++ {
				if tagOf(doc.tape[i]) == tagString {
					buf, _ = Value{d: doc, i: i}.AppendString(buf)
					i++
				}
			}
		})
		asm.SetLevel(prev)
	}
}
