package url

import (
	"unicode"
	"unicode/utf8"
)

// uts46ToASCII is the project's UTS #46 ToASCII (non-transitional, STD3
// rules off, hyphens unchecked, DNS length unchecked) for domains that are
// not plain ASCII.
//
// Why not golang.org/x/net/idna: it needs golang.org/x/text, which the main
// module's go.mod does not list (adding it is someone else's decision; see
// the package report). Until then this implementation covers the mapping
// step with the standard library's Unicode tables: lowercase mapping,
// fullwidth forms, the ideographic full stops, default-ignorable code points,
// and rejection of controls, spaces, private use, surrogates and unassigned
// code points; plus punycode decoding and validation of "xn--" labels.
// Not covered: full NFKC mappings, NFC normalization, the Bidi rule and the
// CONTEXTJ rules (ZWJ/ZWNJ are rejected). The IdnaTestV2 pass rate in the
// tests measures the gap.
func uts46ToASCII(dst []byte, domain string, scratch *[]byte) ([]byte, error) {
	start := len(dst)
	// Step 1 (Map) into runes, with labels split on '.' afterwards.
	var runesBuf [64]rune
	mapped := runesBuf[:0]
	for i := 0; i < len(domain); {
		r, size := utf8.DecodeRuneInString(domain[i:])
		i += size
		if r == utf8.RuneError && size == 1 {
			return dst, ErrInvalidDomain
		}
		m, ok := uts46Map(r)
		if !ok {
			return dst, ErrInvalidDomain
		}
		if m >= 0 {
			mapped = append(mapped, m)
		}
	}
	var decodedBuf [64]rune
	// Steps 3-4 (Break, Convert/Validate) and ToASCII per label.
	for len(mapped) >= 0 {
		end := 0
		for end < len(mapped) && mapped[end] != '.' {
			end++
		}
		label := mapped[:end]
		if isASCIIRunes(label) {
			if len(label) >= len(acePrefix) && hasACELabelRunes(label) {
				var s []byte = (*scratch)[:0]
				for _, r := range label[len(acePrefix):] {
					s = append(s, byte(r))
				}
				*scratch = s
				dec, err := punycodeDecode(decodedBuf[:0], bytesString(s))
				// UTS #46 §4.1 step 4: an ACE label must decode to a
				// non-empty, non-ASCII, valid label, and must not end in
				// the delimiter.
				if err != nil || len(dec) == 0 || isASCIIRunes(dec) || s[len(s)-1] == pcDelimiter || !validLabel(dec) {
					return dst[:start], ErrInvalidDomain
				}
			}
			for _, r := range label {
				dst = append(dst, byte(r))
			}
		} else {
			// A punycode label must be ASCII (UTS #46 §4.1 step 4.1).
			if len(label) >= len(acePrefix) && hasACELabelRunes(label) {
				return dst[:start], ErrInvalidDomain
			}
			if !validLabel(label) {
				return dst[:start], ErrInvalidDomain
			}
			dst = append(dst, acePrefix...)
			var err error
			dst, err = punycodeEncode(dst, label)
			if err != nil {
				return dst[:start], ErrInvalidDomain
			}
		}
		if end == len(mapped) {
			break
		}
		dst = append(dst, '.')
		mapped = mapped[end+1:]
	}
	return dst, nil
}

func isASCIIRunes(rs []rune) bool {
	for _, r := range rs {
		if r >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func hasACELabelRunes(rs []rune) bool {
	return (rs[0]|0x20) == 'x' && (rs[1]|0x20) == 'n' && rs[2] == '-' && rs[3] == '-'
}

// validLabel is UTS #46 §4.1 "Validity Criteria" as far as the standard
// library's tables allow: the label must not start with a combining mark,
// and each code point must be one that the mapping step leaves unchanged.
func validLabel(label []rune) bool {
	if len(label) > 0 && unicode.Is(unicode.M, label[0]) {
		return false
	}
	for _, r := range label {
		m, ok := uts46Map(r)
		if !ok || m != r {
			return false
		}
	}
	return true
}

// Code points UTS #46 maps specially.
const (
	ideographicFullStop = 0x3002
	fullwidthFullStop   = 0xFF0E
	halfwidthFullStop   = 0xFF61
	fullwidthFirst      = 0xFF01 // fullwidth '!'
	fullwidthLast       = 0xFF5E // fullwidth '~'
	fullwidthOffset     = fullwidthFirst - '!'
	zeroWidthNonJoiner  = 0x200C
	zeroWidthJoiner     = 0x200D
	// Mathematical Alphanumeric Symbols: 13 styled copies of A-Z a-z,
	// then (after Greek) 5 styled copies of 0-9.
	mathAlnumFirst       = 0x1D400
	mathAlphabetLen      = 52
	mathAlnumLettersLast = mathAlnumFirst + 13*mathAlphabetLen - 1
	mathDigitsFirst      = 0x1D7CE
	mathDigitsLast       = 0x1D7FF
)

// uts46Map maps one code point: m is the mapped code point, or -1 when it
// is ignored; ok is false when it is disallowed.
func uts46Map(r rune) (m rune, ok bool) {
	switch {
	case r < utf8.RuneSelf:
		if r >= 'A' && r <= 'Z' {
			return r + ('a' - 'A'), true
		}
		return r, true
	case r == utf8.RuneError:
		return 0, false
	case r >= mathAlnumFirst && r <= mathAlnumLettersLast && unicode.IsLetter(r):
		// NFKC folds the styled Latin alphabets to plain letters.
		i := (r - mathAlnumFirst) % mathAlphabetLen
		if i >= 26 {
			return 'a' + i - 26, true
		}
		return 'a' + i, true
	case r >= mathDigitsFirst && r <= mathDigitsLast:
		return '0' + (r-mathDigitsFirst)%10, true
	case r == ideographicFullStop || r == fullwidthFullStop || r == halfwidthFullStop:
		return '.', true
	case r >= fullwidthFirst && r <= fullwidthLast:
		return uts46Map(r - fullwidthOffset)
	case r == zeroWidthNonJoiner || r == zeroWidthJoiner:
		// Deviation characters are valid in non-transitional processing
		// but then need CONTEXTJ, which is not implemented: reject.
		return 0, false
	case unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r) ||
		unicode.Is(unicode.Variation_Selector, r) || r == 0x00AD || r == 0x200B || r == 0x2060 || r == 0xFEFF:
		return -1, true
	case unicode.IsControl(r) || unicode.Is(unicode.Zs, r) || unicode.Is(unicode.Co, r) ||
		unicode.Is(unicode.Cs, r) || unicode.Is(unicode.Cf, r) || !unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S):
		return 0, false
	case unicode.IsUpper(r) || unicode.IsTitle(r):
		return unicode.ToLower(r), true
	}
	return r, true
}
