package json

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"unicode/utf8"

	"github.com/simdedge/simdedge/asm"
)

// SWAR constants for scanning eight string bytes per step. A string byte is
// "special" when it ends the string ('"'), starts an escape ('\\') or is a
// C0 control (RFC 8259 section 7: must be escaped). Bytes >= 0x80 are not
// special: the loop only notes that one was seen, and the string is checked
// with asm.ValidUTF8 (utf8.Valid under purego) once its end is known.
// Measured on twitter.json (15 % non-ASCII) on the development machine,
// Go 1.26: this beat validating each multi-byte sequence as it is met
// (utf8.DecodeRune per rune) by about 20 %. This word loop is the engine's
// scan where asm has no SIMD level; elsewhere marks.go replaces it.
const (
	swarOnes  = 0x0101010101010101
	swarHighs = 0x8080808080808080
	swarQuote = swarOnes * '"'
	swarBack  = swarOnes * '\\'
	swarCtl   = swarOnes * 0x20 // first non-control byte
	swarSpace = swarOnes * ' '
	wordBytes = 8
	byteBits  = 8
)

// specialMask sets the high bit of each special byte of w. Borrows can set
// false flags only above a true one, so the lowest flag is exact.
func specialMask(w uint64) uint64 {
	q := w ^ swarQuote
	s := w ^ swarBack
	return (((q - swarOnes) &^ q) | ((s - swarOnes) &^ s) | ((w - swarCtl) &^ w)) & swarHighs
}

// scanString scans the body of a string whose opening quote is at b[i-1].
// It returns the index of the closing quote and whether escapes occurred.
func scanString(b []byte, i int, checkUTF8 bool) (end int, escaped bool, errAt int, err error) {
	start := i
	var high uint64 // high bits of the bytes passed so far: non-ASCII seen
	for {
		for i+wordBytes <= len(b) {
			w := binary.LittleEndian.Uint64(b[i:])
			m := specialMask(w)
			if m != 0 {
				k := bits.TrailingZeros64(m) / byteBits
				high |= w & (1<<(k*byteBits) - 1)
				i += k
				break
			}
			high |= w
			i += wordBytes
		}
		if i >= len(b) {
			return 0, false, len(b), ErrUnexpectedEOF
		}
		switch c := b[i]; {
		case c == '"':
			if checkUTF8 && high&swarHighs != 0 && !asm.ValidUTF8(b[start:i]) {
				return 0, false, firstInvalidUTF8(b, start), ErrInvalidUTF8
			}
			return i, escaped, 0, nil
		case c == '\\':
			escaped = true
			n, e := checkEscape(b, i)
			if e != nil {
				return 0, false, i, e
			}
			i += n
		case c < 0x20:
			return 0, false, i, ErrControlChar
		default: // the tail shorter than a word
			high |= uint64(c)
			i++
		}
	}
}

// firstInvalidUTF8 returns the offset of the first byte at or after i that
// does not start a valid UTF-8 sequence (only called when one exists).
func firstInvalidUTF8(b []byte, i int) int {
	for i < len(b) {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return i
}

// checkEscape validates the escape starting with the backslash at b[i] and
// returns its length (RFC 8259 section 7). A \u escape of a high surrogate
// must be followed by a \u escape of a low surrogate.
func checkEscape(b []byte, i int) (int, error) {
	if i+1 >= len(b) {
		return 0, ErrUnexpectedEOF
	}
	switch b[i+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 2, nil
	case 'u':
	default:
		return 0, ErrInvalidEscape
	}
	r, ok := hex4(b, i+2)
	if !ok {
		return 0, ErrInvalidEscape
	}
	switch {
	case isLowSurrogate(r):
		return 0, ErrLoneSurrogate
	case !isHighSurrogate(r):
		return escUnicodeLen, nil
	}
	j := i + escUnicodeLen
	if j+1 >= len(b) || b[j] != '\\' || b[j+1] != 'u' {
		return 0, ErrLoneSurrogate
	}
	r2, ok := hex4(b, j+2)
	if !ok {
		return 0, ErrInvalidEscape
	}
	if !isLowSurrogate(r2) {
		return 0, ErrLoneSurrogate
	}
	return 2 * escUnicodeLen, nil
}

const (
	escUnicodeLen = 6 // \uXXXX
	surrHighLo    = 0xd800
	surrLowLo     = 0xdc00
	surrLowHi     = 0xdfff
	surrSelf      = 0x10000
)

func isHighSurrogate(r rune) bool { return r >= surrHighLo && r < surrLowLo }
func isLowSurrogate(r rune) bool  { return r >= surrLowLo && r <= surrLowHi }

// hexVal maps a byte to its hex digit value, or hexBad. Built at init from the
// readable predicate below (tested against it).
var hexVal = func() (t [256]byte) {
	for c := range t {
		t[c] = hexDigit(byte(c))
	}
	return t
}()

const hexBad = 0xff

func hexDigit(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10
	}
	return hexBad
}

func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		v := hexVal[c]
		if v == hexBad {
			return 0, false
		}
		r = r<<4 | rune(v)
	}
	return r, true
}

// appendUnescaped appends the unescaped form of a validated string body.
func appendUnescaped(dst, s []byte) []byte {
	for len(s) > 0 {
		k := bytes.IndexByte(s, '\\')
		if k < 0 {
			return append(dst, s...)
		}
		dst = append(dst, s[:k]...)
		s = s[k:]
		if len(s) < 2 {
			return dst
		}
		switch c := s[1]; c {
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r, _ := hex4(s, 2)
			s = s[escUnicodeLen:]
			if isHighSurrogate(r) && len(s) >= escUnicodeLen {
				r2, _ := hex4(s, 2)
				r = (r-surrHighLo)<<10 | (r2 - surrLowLo) + surrSelf
				s = s[escUnicodeLen:]
			}
			dst = utf8.AppendRune(dst, r)
			continue
		default: // '"', '\\', '/'
			dst = append(dst, c)
		}
		s = s[2:]
	}
	return dst
}
