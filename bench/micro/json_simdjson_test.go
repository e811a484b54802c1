package micro

import (
	"testing"

	"github.com/simdedge/simdedge/asm"
	"github.com/simdedge/simdedge/bench/internal/cjson"
	sjson "github.com/simdedge/simdedge/parse/json"
)

// simdjsonKernel is the simdjson implementation that uses the same
// instruction set as each asm level, so that each of simdedge's SIMD paths
// is measured against the peer's path of the same width.
var simdjsonKernel = map[asm.Level]string{
	asm.AVX512: "icelake", // AVX-512 (F, BW, VL, VBMI2...)
	asm.AVX2:   "haswell", // AVX2 + BMI + CLMUL
}

// simdjsonPeer returns a C++ simdjson parser for data on kernel impl ("":
// simdjson's own choice), or skips (fails under REQUIRE_SIMDJSON=1) when
// the binding is not built (go test -tags simdjson) or the CPU lacks the
// kernel.
func simdjsonPeer(b *testing.B, data []byte, impl string) *cjson.Parser {
	if !cjson.Available() {
		if cjson.Required() {
			b.Fatal(cjson.Reason())
		}
		b.Skip(cjson.Reason())
	}
	p, err := cjson.New(data, impl)
	if err != nil {
		b.Skipf("simdjson kernel %q: %v", impl, err)
	}
	b.Cleanup(p.Close)
	return p
}

// benchSimdjson is the simdjson row of BenchmarkJSON: dom::parser::parse
// of the whole document (structural index, tape, numbers converted,
// strings unescaped), on the kernel simdjson picks for this CPU.
func benchSimdjson(b *testing.B, name string, data []byte) {
	b.Run(name+"/simdjson", func(b *testing.B) {
		p := simdjsonPeer(b, data, "")
		jsonBench(b, data, func() error { _, err := p.Parse(); return err })
	})
}

// BenchmarkJSONLevels puts simdedge's default parse beside C++ simdjson's
// DOM parse at each asm level, each against simdjson's kernel of the same
// instruction set (rows <corpus>/<level>/<impl>):
//
//	simdedge        parse/json Parse (default engine) with asm at the level
//	simdedge-eager  the same Parse, then the work simdjson's parse does and
//	                Parse defers: every number converted (Int, else Float)
//	                and every string and key unescaped into one buffer
//	                (AppendString), by a walk over the document
//	simdedge-eagerparse  Parse with Options.Eager: numbers converted and
//	                escaped strings unescaped inside Parse, as simdjson
//	                does (plain strings stay in the input, already in
//	                their final form); no walk
//	simdjson        simdjson 3 dom::parser::parse on the matching kernel
//
// Run it interleaved (one -count 1 process per round, pinned with
// taskset) to take a ratio per round; bench/results/parsers-json-*.md has
// the commands.
func BenchmarkJSONLevels(b *testing.B) {
	for _, name := range jsonCorpora {
		data := sharedData(b, "json/"+name+".json")
		for _, level := range asm.Levels() {
			impl, ok := simdjsonKernel[level]
			if !ok {
				continue
			}
			b.Run(name+"/"+level.String()+"/simdedge", func(b *testing.B) {
				prev := asm.SetLevel(level)
				defer asm.SetLevel(prev)
				p := sjson.NewParser(sjson.Options{})
				jsonBench(b, data, func() error { _, err := p.Parse(data); return err })
			})
			b.Run(name+"/"+level.String()+"/simdedge-eager", func(b *testing.B) {
				prev := asm.SetLevel(level)
				defer asm.SetLevel(prev)
				p := sjson.NewParser(sjson.Options{})
				var buf []byte
				jsonBench(b, data, func() error {
					doc, err := p.Parse(data)
					if err != nil {
						return err
					}
					buf, err = jsonEager(doc.Root(), buf[:0])
					return err
				})
			})
			b.Run(name+"/"+level.String()+"/simdedge-eagerparse", func(b *testing.B) {
				prev := asm.SetLevel(level)
				defer asm.SetLevel(prev)
				p := sjson.NewParser(sjson.Options{Eager: true})
				jsonBench(b, data, func() error { _, err := p.Parse(data); return err })
			})
			b.Run(name+"/"+level.String()+"/simdjson", func(b *testing.B) {
				p := simdjsonPeer(b, data, impl)
				jsonBench(b, data, func() error { _, err := p.Parse(); return err })
			})
		}
	}
}

// jsonEager does to v what simdjson's DOM parse does while it builds its
// tape and parse/json defers: it converts every number (to int64 when it
// is an integer in range, else to float64) and unescapes every string and
// key, appending them to buf.
func jsonEager(v sjson.Value, buf []byte) ([]byte, error) {
	var err error
	switch v.Kind() {
	case sjson.Number:
		if _, err = v.Int(); err != nil {
			_, err = v.Float()
		}
	case sjson.String:
		buf, err = v.AppendString(buf)
	case sjson.Array:
		it, _ := v.Array()
		for err == nil && it.Next() {
			buf, err = jsonEager(it.Value(), buf)
		}
	case sjson.Object:
		it, _ := v.Object()
		for err == nil && it.Next() {
			if buf, err = it.Key().AppendString(buf); err == nil {
				buf, err = jsonEager(it.Value(), buf)
			}
		}
	}
	return buf, err
}

// BenchmarkJSONPeerStages times simdjson's two stages apart, at each asm
// level's matching kernel, to set beside parse/json's BenchmarkStages:
//
//	stage1  UTF-8 check and structural index (parse/json: utf8 + index)
//	stage2  tape over that index, numbers converted and strings unescaped
//	        (parse/json: tape_index + numbers + strings)
func BenchmarkJSONPeerStages(b *testing.B) {
	for _, name := range jsonCorpora {
		data := sharedData(b, "json/"+name+".json")
		for _, level := range asm.Levels() {
			impl, ok := simdjsonKernel[level]
			if !ok {
				continue
			}
			b.Run(name+"/"+level.String()+"/stage1", func(b *testing.B) {
				p := simdjsonPeer(b, data, impl)
				jsonBench(b, data, func() error { _, err := p.Stage1(); return err })
			})
			b.Run(name+"/"+level.String()+"/stage2", func(b *testing.B) {
				p := simdjsonPeer(b, data, impl)
				// A whole parse first: it sizes the document's tape and
				// string buffer, which stage 2 alone does not.
				if _, err := p.Parse(); err != nil {
					b.Fatal(err)
				}
				if _, err := p.Stage1(); err != nil {
					b.Fatal(err)
				}
				jsonBench(b, data, func() error { _, err := p.Stage2(); return err })
			})
		}
	}
}
