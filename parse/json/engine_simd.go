//go:build amd64 && !purego && !noasm

package json

import (
	simdjson "github.com/minio/simdjson-go"

	"github.com/simdedge/simdedge/asm"
)

// simdAvailable is decided once: simdjson-go needs AVX2 and CLMUL and has no
// fallback of its own.
var simdAvailable = simdjson.SupportedCPU()

// The default engine (options.go) stays the pure-Go one even where
// simdjson-go runs. Measured on the AMD EPYC (Zen 5) development machine
// with Go 1.26, process CPU time per parse, medians of 10 interleaved
// rounds (bench/micro BenchmarkJSON, cpu-ns/op): the pure-Go engine (with
// its marks, see marks.go) parsed twitter.json in 291 µs against 655 µs for
// the simdjson-go engine (665 µs for raw simdjson-go, whose two stages run
// in two goroutines and so cost more CPU than wall time), citm 687 against
// 1609, canada 1487 against 13040, and extracted the twitter fields in 314
// against 657, with no allocation against three. simdjson-go also needs
// checks after it for inputs it wrongly accepts (see parseSIMD). Select it
// with Options.Engine = EngineSIMD; it is tested and fuzzed to agree with
// the pure-Go engine on every input.

// simdMinLen is the input length below which the pure-Go engine is used even
// when simdjson-go is available: simdjson-go has a fixed cost per call (its
// stage channel, one allocation) that small request bodies should not pay.
// BenchmarkSmall (2-core AVX-512 development machine, Go 1.26, shared and
// noisy) showed the pure-Go engine ahead at every size from 128 B to 16 KiB,
// 2-20x below 1 KiB; the threshold keeps typical small bodies off simdjson-go
// while large documents still take the engine the issue asks for.
const simdMinLen = 2048

// noCopyStrings lets simdjson-go point unescaped strings into the input, the
// layout the pure-Go engine uses (built once: the option is a closure).
var noCopyStrings = []simdjson.ParserOption{simdjson.WithCopyStrings(false)}

type simdState struct {
	pj     *simdjson.ParsedJson
	checks []uint64 // bytesChecksOK's scratch
}

// parseSIMD parses b with simdjson-go and reports whether the result can be
// used. simdjson-go accepts a few inputs that RFC 8259 and the pure-Go engine
// reject, so its result is checked for them; on false the caller re-parses
// with the pure-Go engine, which gives the verdict.
func (d *Document) parseSIMD(b []byte, nd bool) bool {
	var (
		pj  *simdjson.ParsedJson
		err error
	)
	if nd {
		pj, err = simdjson.ParseND(b, d.simd.pj, noCopyStrings...)
	} else {
		pj, err = simdjson.Parse(b, d.simd.pj, noCopyStrings...)
	}
	if err != nil {
		return false
	}
	d.simd.pj = pj
	d.tape, d.strs, d.msg = pj.Tape, pj.Strings.B, pj.Message
	// simdjson-go strips its input with bytes.TrimSpace, which also strips
	// \f, \v, U+0085 and U+00A0; RFC 8259 whitespace is only the four
	// bytes of jsonSpace, so the stripped edges must consist of those.
	if !onlyJSONSpaceTrimmed(b, len(pj.Message)) {
		return false
	}
	// simdjson-go validates no UTF-8 (RFC 8259 section 8.1). Outside
	// strings an accepted document is ASCII, so checking the whole
	// message checks every string; asm's kernel skips ASCII vectors.
	if !d.opts.AllowInvalidUTF8 && !asm.ValidUTF8(pj.Message) {
		return false
	}
	// It accepts a NUL after literals, invalid \u escapes and "-01.5"
	// (bytesChecksOK).
	var ok bool
	if d.simd.checks, ok = bytesChecksOK(pj.Message, d.simd.checks); !ok {
		return false
	}
	// It has no depth limit.
	return tapeDepthOK(pj.Tape, d.opts.MaxDepth)
}

// isNumberLead holds the bytes that may precede a number in a document.
var isNumberLead = func() (t [256]bool) {
	for _, c := range []byte("[,: \t\r\n") {
		t[c] = true
	}
	return t
}()

func onlyJSONSpaceTrimmed(b []byte, kept int) bool {
	lead := skipWS(b, 0)
	trail := 0
	for trail < len(b)-lead && isSpace[b[len(b)-1-trail]] {
		trail++
	}
	return len(b)-lead-trail == kept
}

func tapeDepthOK(t []uint64, maxDepth int) bool {
	depth := 0
	for i := 0; i < len(t); {
		e := t[i]
		switch tagOf(e) {
		case tagObject, tagArray:
			// A container of n tape entries nests at most n/2 levels (each
			// level adds an opener and a closer), so one that cannot reach
			// the limit is skipped whole: typical documents are checked
			// by visiting a few dozen entries instead of the whole tape.
			end := int(payloadOf(e))
			if depth+(end-i)/2 <= maxDepth {
				i = end
				continue
			}
			depth++
			if depth > maxDepth {
				return false
			}
			i++
		case tagObjEnd, tagArrEnd:
			depth--
			i++
		case tagString, tagInt, tagUint, tagFloat:
			i += 2
		default:
			i++
		}
	}
	return true
}
