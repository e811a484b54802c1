//go:build amd64 && !purego && !noasm

package json

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/simdedge/simdedge/asm"
)

// TestTapeDepth checks the simd engine's depth check, with its skipping of
// shallow containers, against the depth counted by brackets.
func TestTapeDepth(t *testing.T) {
	if !simdAvailable {
		t.Skip("simd engine not available on this machine/build")
	}
	docs := []string{
		`[1,[2,[3,[4]]],{"a":{"b":[[]]}}]`,
		`{"x":[[[[[[1]]]]]],"y":[{"z":[[[[2]]]]}]}`,
		"[" + strings.Repeat(`{"a":[`, 20) + strings.Repeat("]}", 20) + "]",
	}
	for _, doc := range docs {
		p := NewParser(Options{Engine: EngineSIMD})
		p.doc.simdMin = 0
		if _, err := p.Parse([]byte(doc)); err != nil {
			t.Fatal(err)
		}
		deepest, depth := 0, 0
		for _, c := range []byte(doc) {
			switch c {
			case '[', '{':
				depth++
				deepest = max(deepest, depth)
			case ']', '}':
				depth--
			}
		}
		for limit := 1; limit <= deepest+2; limit++ {
			if got := tapeDepthOK(p.doc.tape, limit); got != (deepest <= limit) {
				t.Errorf("%s: limit %d: got %v, depth %d", doc, limit, got, deepest)
			}
		}
	}
}

// refEscapesValid is the walk escapesValid replaced: visit every
// backslash from the start, pairing each with its escape.
func refEscapesValid(m []byte) bool {
	for i := 0; i < len(m); {
		k := bytes.IndexByte(m[i:], '\\')
		if k < 0 {
			return true
		}
		i += k
		if i+1 < len(m) && m[i+1] == 'u' {
			n, err := checkEscape(m, i)
			if err != nil {
				return false
			}
			i += n
			continue
		}
		i += 2
	}
	return true
}

// TestBytesChecks checks the fused byte checks of the simd engine against
// the separate searches they replaced (NUL, every backslash walked from the
// start, "-0" after a number lead), on random strings of the bytes that
// matter, short and longer than a Classify window.
func TestBytesChecks(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	atoms := []string{`\`, `\\`, `u`, `\u`, `0`, `d8`, `00`, `dc`, `41`, `g`, `"`, `a`, `-`, `-0`, `1`, `[`, `,`, ` `, "\x00", `:`}
	var buf []uint64
	for k := range 100000 {
		var b []byte
		n := r.IntN(12)
		if k%1000 == 0 {
			n = r.IntN(2 * checkWindow)
		}
		for range n {
			a := atoms[r.IntN(len(atoms))]
			if k%1000 == 0 && r.IntN(50) != 0 {
				a = "x" // long inputs: sparse, so checks cross blocks and windows
			}
			b = append(b, a...)
		}
		want := refEscapesValid(b) && bytes.IndexByte(b, 0) < 0 && refNegativeZerosOK(b)
		var got bool
		if buf, got = bytesChecksOK(b, buf); got != want {
			t.Fatalf("bytesChecksOK(%q) = %v, want %v", b, got, want)
		}
	}
	// Escapes and numbers straddling a 64-byte block and a window edge.
	for _, edge := range []int{asm.BlockSize, checkWindow} {
		for k := 0; k <= 8; k++ {
			for _, tail := range []string{`\\u12`, `\\\ud800`, `\\\u0041`, `\\\\\u00g0`, "[-01", "[-0]", ",-00", "\x00"} {
				b := append(bytes.Repeat([]byte("x"), edge-k), tail...)
				want := refEscapesValid(b) && bytes.IndexByte(b, 0) < 0 && refNegativeZerosOK(b)
				var got bool
				if buf, got = bytesChecksOK(b, buf); got != want {
					t.Fatalf("%q at %d: got %v, want %v", tail, edge-k, got, want)
				}
			}
		}
	}
}

// refNegativeZerosOK reports that no number in m starts with "-0" followed by
// a digit. A '-' starts a number only after '[', ',', ':' or whitespace;
// the same bytes inside a string ("a, -01") only cost a needless re-parse.
func refNegativeZerosOK(m []byte) bool {
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

// BenchmarkBytesChecks compares the fused byte checks with the three
// searches they replaced, on the corpora (every document passes).
func BenchmarkBytesChecks(b *testing.B) {
	for _, name := range []string{"twitter.json", "citm_catalog.json", "canada.json"} {
		data := sharedJSON(b, name)
		var buf []uint64
		b.Run(name+"/fused", func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			defer reportCPU(b, cpuTime())
			for b.Loop() {
				var ok bool
				if buf, ok = bytesChecksOK(data, buf); !ok {
					b.Fatal("rejected")
				}
			}
		})
		b.Run(name+"/searches", func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			defer reportCPU(b, cpuTime())
			for b.Loop() {
				if !refEscapesSearch(data) || bytes.IndexByte(data, 0) >= 0 || !refNegativeZerosOK(data) {
					b.Fatal("rejected")
				}
			}
		})
	}
}

// escapesValid re-checks every \u escape of an accepted document. It
// searches for the two bytes `\u` (one vectorised pass when there are
// none, the common case) instead of visiting every backslash. A `\u` found
// is an escape exactly when an even number of backslashes precede it
// inside the run that ends there: in "\\u" the backslash before u is
// itself escaped. i only ever advances to the end of an escape, so the run
// never needs to be counted back past i.
func refEscapesSearch(m []byte) bool {
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
