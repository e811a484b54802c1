package asm

// IndexTabNewline returns the index of the first ASCII tab (0x09), line
// feed (0x0A) or carriage return (0x0D) in b, or -1. The URL standard strips
// these from every input, so URL parsing scans for them first.
func IndexTabNewline(b []byte) int {
	if len(b) == 0 {
		return -1
	}
	return indexTabNewline(b)
}

// IndexTabNewlineString is IndexTabNewline for a string, without copying.
func IndexTabNewlineString(s string) int { return IndexTabNewline(stringBytes(s)) }

// IndexNotInRange returns the index of the first byte of b outside the
// inclusive range [lo, hi], or -1. If lo > hi every byte is outside.
func IndexNotInRange(b []byte, lo, hi byte) int {
	if len(b) == 0 {
		return -1
	}
	if lo > hi {
		return 0
	}
	return indexNotInRange(b, lo, hi)
}

// IndexNotInRangeString is IndexNotInRange for a string, without copying.
func IndexNotInRangeString(s string, lo, hi byte) int {
	return IndexNotInRange(stringBytes(s), lo, hi)
}

// IndexNonASCII returns the index of the first byte >= 0x80 in b, or -1.
func IndexNonASCII(b []byte) int { return IndexNotInRange(b, 0x00, 0x7f) }

// ValidASCII reports whether every byte of b is below 0x80.
func ValidASCII(b []byte) bool { return IndexNonASCII(b) < 0 }

// ValidASCIIString reports whether every byte of s is below 0x80.
func ValidASCIIString(s string) bool { return ValidASCII(stringBytes(s)) }

// IndexControlOrNonASCII returns the index of the first byte of b that is a
// C0 control (< 0x20), DEL (0x7F) or not ASCII (>= 0x80), or -1: the bytes
// that are not printable ASCII. (The URL standard's C0 control
// percent-encode set is exactly these bytes.)
func IndexControlOrNonASCII(b []byte) int { return IndexNotInRange(b, 0x20, 0x7e) }
