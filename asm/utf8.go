package asm

// ValidUTF8 reports whether b is entirely valid UTF-8, with exactly the
// semantics of unicode/utf8.Valid: overlong forms, surrogates (U+D800 to
// U+DFFF), code points above U+10FFFF, the bytes C0, C1 and F5 to FF, stray
// continuation bytes and sequences cut short by the end of b are all
// invalid. RFC 8259 section 8.1 requires UTF-8 for JSON texts, so the JSON
// engines run it over every string (or whole documents) that holds a byte
// >= 0x80.
//
// The AVX2 and AVX-512 kernels check 32 or 64 bytes per step with the
// lookup-table method of Keiser and Lemire ("Validating UTF-8 in less than
// one instruction per byte", 2021), skipping all-ASCII vectors after one
// test; the pure-Go twin is utf8.Valid.
func ValidUTF8(b []byte) bool {
	if len(b) == 0 {
		return true
	}
	return validUTF8(b)
}

// ValidUTF8String is ValidUTF8 for a string, without copying.
func ValidUTF8String(s string) bool { return ValidUTF8(stringBytes(s)) }
