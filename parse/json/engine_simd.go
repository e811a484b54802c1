//go:build amd64 && !purego && !noasm

package json

import (
	"bytes"

	simdjson "github.com/minio/simdjson-go"

	"github.com/simdedge/simdedge/asm"
)

// simdAvailable is decided once: simdjson-go needs AVX2 and CLMUL and has no
// fallback of its own.
var simdAvailable = simdjson.SupportedCPU()

// The default engine (options.go) stays the pure-Go one even where
// simdjson-go runs.
// Measured on the AMD EPYC (Zen 5) development machine with Go 1.26,
// fastest of 60 interleaved rounds (bench/micro TestJSONMinTime): the
// pure-Go engine parsed twitter.json in 448 µs against 598 µs for the
// simdjson-go engine (494 µs for raw simdjson-go), citm 791 against 1205,
// canada 1284 against 9640, and extracted the twitter fields in 463 against
// 579, with no allocation against three. simdjson-go also needs checks
// after it for inputs it wrongly accepts (see parseSIMD). Select it with
// Options.Engine = EngineSIMD; it is tested and fuzzed to agree with the
// pure-Go engine on every input.

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
	pj *simdjson.ParsedJson
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
	// It decodes "\ud800\u0041" into one wrong code point instead of
	// rejecting the unpaired surrogate, and accepts non-hex digits in \u
	// escapes, so every \u escape is re-checked. In an
	// accepted document every backslash is inside a string, so walking them
	// from the start pairs each with its escape correctly.
	if !escapesValid(pj.Message) {
		return false
	}
	// It accepts a NUL byte after true, false and null ("[true\x00]",
	// found by FuzzParse). A raw NUL is invalid anywhere in an accepted
	// document (in strings it is a control character), so any NUL rejects.
	if bytes.IndexByte(pj.Message, 0) >= 0 {
		return false
	}
	// It accepts a negative number with leading zeros when the number is
	// a float or longer than 20 bytes ("-01.5", found by FuzzParseND).
	if !negativeZerosOK(pj.Message) {
		return false
	}
	// It has no depth limit.
	return tapeDepthOK(pj.Tape, d.opts.MaxDepth)
}

// negativeZerosOK reports that no number in m starts with "-0" followed by
// a digit. A '-' starts a number only after '[', ',', ':' or whitespace;
// the same bytes inside a string ("a, -01") only cost a needless re-parse.
func negativeZerosOK(m []byte) bool {
	const negZero = "-0"
	for i := 0; ; {
		k := bytes.Index(m[i:], []byte(negZero))
		if k < 0 {
			return true
		}
		i += k
		if i+len(negZero) < len(m) && m[i+len(negZero)]-'0' <= 9 &&
			i > 0 && isNumberLead[m[i-1]] {
			return false
		}
		i += len(negZero)
	}
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

// escapesValid re-checks every \u escape of an accepted document. It
// searches for the two bytes `\u` (one vectorised pass when there are
// none, the common case) instead of visiting every backslash. A `\u` found
// is an escape exactly when an even number of backslashes precede it
// inside the run that ends there: in "\\u" the backslash before u is
// itself escaped. i only ever advances to the end of an escape, so the run
// never needs to be counted back past i.
func escapesValid(m []byte) bool {
	const uEscape = `\u`
	for i := 0; ; {
		k := bytes.Index(m[i:], []byte(uEscape))
		if k < 0 {
			return true
		}
		j := i + k
		run := 0
		for j-run-1 >= i && m[j-run-1] == '\\' {
			run++
		}
		if run%2 == 1 { // m[j] is the second byte of a "\\" escape
			i = j + 1
			continue
		}
		// simdjson-go decodes a \u escape without validating its hex
		// digits ("\u000 ", found by FuzzParse) and mis-decodes unpaired
		// surrogates.
		n, err := checkEscape(m, j)
		if err != nil {
			return false
		}
		i = j + n
	}
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
