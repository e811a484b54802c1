//go:build amd64 && !purego && !noasm

package json

import (
	"math/bits"

	"github.com/simdedge/simdedge/asm"
)

// The byte checks after simdjson-go (see parseSIMD) look for three bytes:
// NUL (never valid in an accepted document), the backslashes of \u escapes
// and the '-' of negative numbers. They run as one asm.Classify pass per
// window of the message and walk the set bits, instead of one search per
// byte kind (bytes.IndexByte for NUL, bytes.Index for `\u` and "-0",
// which re-enter IndexByte at every false candidate): on twitter.json the
// three searches took about 8 % of the simd engine's CPU time, the same
// order as the 10 % that separated it from raw simdjson-go.
const (
	checkNUL = iota
	checkBackslash
	checkMinus
	checkClasses
	checkWindow = 16 << 10
)

var checkTable = asm.MustClassTable(
	func(c byte) bool { return c == 0 },
	func(c byte) bool { return c == '\\' },
	func(c byte) bool { return c == '-' },
)

// bytesChecksOK reports that m, a document simdjson-go accepted, has no NUL
// byte, only valid \u escapes (hex digits, surrogates paired), and no
// negative number with a leading zero before another digit. buf is
// scratch, grown once and returned for reuse.
func bytesChecksOK(m []byte, buf []uint64) ([]uint64, bool) {
	if n := asm.ClassifiedLen(checkWindow, checkClasses); len(buf) < n {
		buf = make([]uint64, n)
	}
	// escEnd is where the last escape seen ends. In an accepted document
	// every backslash is inside a string, so taking the backslashes in
	// order, each one at or after escEnd starts an escape and each one
	// before it is that escape's second byte ("\\\\").
	escEnd := 0
	for base := 0; base < len(m); base += checkWindow {
		n := asm.Classify(buf, m[base:min(base+checkWindow, len(m))], checkTable)
		for w := 0; w < n; w += checkClasses {
			if buf[w+checkNUL] != 0 {
				return buf, false
			}
			at := base + w/checkClasses*asm.BlockSize
			for bs := buf[w+checkBackslash]; bs != 0; bs &= bs - 1 {
				p := at + bits.TrailingZeros64(bs)
				if p < escEnd {
					continue
				}
				escEnd = p + 2
				// simdjson-go checks the other escapes itself; a \u
				// escape it decodes without validating the hex digits
				// ("\u000 ", found by FuzzParse) and mis-decodes
				// unpaired surrogates ("\ud800\u0041").
				if p+1 < len(m) && m[p+1] == 'u' {
					k, err := checkEscape(m, p)
					if err != nil {
						return buf, false
					}
					escEnd = p + k
				}
			}
			// simdjson-go accepts a negative number with leading zeros
			// when it is a float or longer than 20 bytes ("-01.5", found
			// by FuzzParseND). A '-' starts a number only after '[', ',',
			// ':' or whitespace; the same bytes inside a string ("a,
			// -01") only cost a needless re-parse.
			for ms := buf[w+checkMinus]; ms != 0; ms &= ms - 1 {
				p := at + bits.TrailingZeros64(ms)
				if p+2 < len(m) && m[p+1] == '0' && m[p+2]-'0' <= 9 && p > 0 && isNumberLead[m[p-1]] {
					return buf, false
				}
			}
		}
	}
	return buf, true
}
