package files

import "github.com/simdedge/simdedge/internal/ascii"

// Range requests (RFC 9110 §14): one byte range is served as 206; several
// are answered with the whole file (the server may ignore Range, §14.2),
// which costs one response where multipart/byteranges would cost the
// framing and the bookkeeping; a Range that is not of bytes or is
// malformed is ignored the same way.

// Outcomes of parseRange.
const (
	rangeNone          = iota // serve the whole file
	rangeOne                  // serve [start, start+length)
	rangeUnsatisfiable        // 416
)

// parseRange reads a Range field value for a file of size bytes.
func parseRange(v []byte, size int64) (kind int, start, length int64) {
	v = ascii.TrimOWS(v)
	const unit = "bytes="
	if len(v) < len(unit) || !ascii.EqualFold(v[:len(unit)], unit) {
		return rangeNone, 0, 0
	}
	spec := ascii.TrimOWS(v[len(unit):])
	for _, c := range spec {
		if c == ',' {
			return rangeNone, 0, 0
		}
	}
	dash := -1
	for i, c := range spec {
		if c == '-' {
			dash = i
			break
		}
	}
	if dash < 0 {
		return rangeNone, 0, 0
	}
	first, okF := number(spec[:dash])
	last, okL := number(spec[dash+1:])
	switch {
	case dash == 0: // suffix: the last N bytes
		if !okL {
			return rangeNone, 0, 0
		}
		if last == 0 || size == 0 {
			return rangeUnsatisfiable, 0, 0
		}
		last = min(last, size)
		return rangeOne, size - last, last
	case !okF:
		return rangeNone, 0, 0
	case dash == len(spec)-1: // "first-"
		if first >= size {
			return rangeUnsatisfiable, 0, 0
		}
		return rangeOne, first, size - first
	case !okL || last < first:
		return rangeNone, 0, 0 // invalid: ignored (§14.1.1)
	default:
		if first >= size {
			return rangeUnsatisfiable, 0, 0
		}
		last = min(last, size-1)
		return rangeOne, first, last - first + 1
	}
}

// maxDigits keeps a position within int64 (19 digits could overflow).
const maxDigits = 18

// number parses 1*DIGIT.
func number(b []byte) (int64, bool) {
	b = ascii.TrimOWS(b)
	if len(b) == 0 || len(b) > maxDigits {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}
