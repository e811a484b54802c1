package http

import (
	"github.com/simdedge/simdedge/asm"
	"github.com/simdedge/simdedge/internal/ascii"
)

// Byte classes of RFC 9110 §5.6.2 (tchar: internal/ascii's IsTchar) and
// RFC 5234 (CTL), written as readable predicates. Every table below is built from them at init and
// tested against them (tables_test.go).

// isCtl reports whether b is a control byte: C0 (including HTAB, CR and LF)
// or DEL. In a field value only HTAB of these is allowed; CR and LF end the
// line. One mask of these bytes therefore finds both line ends and invalid
// bytes in a single scan.
func isCtl(b byte) bool { return b < ' ' || b == 0x7f }

// isTargetByte reports whether b may appear in a request-target: printable
// ASCII without SP (RFC 9112 §3.2 and RFC 3986's characters; bytes >= 0x80
// are rejected, as by llhttp's strict mode and by RFC 3986), and without
// "#": a request-target has no fragment (RFC 9112 §3.2), and one that
// carries a "#" is read differently by parsers that cut it off and parsers
// that keep it in the path.
func isTargetByte(b byte) bool { return b > ' ' && b < 0x7f && b != '#' }

// isHexDigit reports whether b is HEXDIG (RFC 5234, case-insensitive as
// RFC 9112 §7.1 allows).
func isHexDigit(b byte) bool {
	return b >= '0' && b <= '9' || b >= 'a' && b <= 'f' || b >= 'A' && b <= 'F'
}

// isQdtext reports whether b may appear unescaped in a quoted-string
// (RFC 9110 §5.6.4: HTAB / SP / %x21 / %x23-5B / %x5D-7E / obs-text).
func isQdtext(b byte) bool {
	return b == '\t' || b == ' ' || b == 0x21 || b >= 0x23 && b <= 0x5b || b >= 0x5d && b != 0x7f
}

// byteSet is a 256-entry membership table built from a predicate.
type byteSet [256]bool

func newByteSet(in func(byte) bool) *byteSet {
	var s byteSet
	for i := range s {
		s[i] = in(byte(i))
	}
	return &s
}

var (
	tcharSet  = newByteSet(ascii.IsTchar)
	targetSet = newByteSet(isTargetByte)
	qdtextSet = newByteSet(isQdtext)
)

// hexVal maps a byte to its hexadecimal value, or to noHex.
var hexVal = func() (t [256]byte) {
	for i := range t {
		b := byte(i)
		switch {
		case b >= '0' && b <= '9':
			t[i] = b - '0'
		case b >= 'a' && b <= 'f':
			t[i] = b - 'a' + 10
		case b >= 'A' && b <= 'F':
			t[i] = b - 'A' + 10
		default:
			t[i] = noHex
		}
	}
	return t
}()

const noHex = 0xff

// Class indexes in headTable. Both classes fit in one asm.ClassTable (the
// tchar set needs most of the 8 nibble rectangles, CTL two more), so one
// Classify call per window yields every mask the head walker needs.
const (
	classTchar = iota
	classCtl
	numClasses
)

var headTable = asm.MustClassTable(ascii.IsTchar, isCtl)
