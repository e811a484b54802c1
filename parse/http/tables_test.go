package http

import (
	"strings"
	"testing"

	"github.com/simdedge/simdedge/internal/ascii"
)

// TestTables checks every table built at init against its predicate, and
// the predicates against their RFC definitions written out differently.
func TestTables(t *testing.T) {
	for i := 0; i < 256; i++ {
		b := byte(i)
		if tcharSet[b] != ascii.IsTchar(b) || targetSet[b] != isTargetByte(b) ||
			qdtextSet[b] != isQdtext(b) || regNameSet[b] != isRegNameByte(b) {
			t.Errorf("byte %#x: table and predicate differ", b)
		}
		c := headTable.Class(b)
		if (c&(1<<classTchar) != 0) != ascii.IsTchar(b) || (c&(1<<classCtl) != 0) != isCtl(b) {
			t.Errorf("byte %#x: class table %b", b, c)
		}
		if (hexVal[b] != noHex) != isHexDigit(b) {
			t.Errorf("byte %#x: hexVal", b)
		}
		// RFC 9110 §5.6.2 tchar, spelled out.
		rfc := strings.IndexByte("!#$%&'*+-.^_`|~", b) >= 0 ||
			b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
		if ascii.IsTchar(b) != rfc {
			t.Errorf("byte %#x: ascii.IsTchar %v, RFC %v", b, ascii.IsTchar(b), rfc)
		}
	}
}

// TestWordTricks checks the eight-byte lane tests against byte loops for
// every byte value in every lane, with neighbours that provoke borrows and
// carries.
func TestWordTricks(t *testing.T) {
	for _, fill := range []byte{0x00, 0x20, '#', 0x41, 0x7f, 0x80, 0xff} {
		for lane := 0; lane < 8; lane++ {
			for v := 0; v < 256; v++ {
				var w [8]byte
				for i := range w {
					w[i] = 'a'
				}
				for i := lane + 1; i < 8; i++ {
					w[i] = fill
				}
				w[lane] = byte(v)
				if got, want := scalarNextCtl(w[:], 0), firstCtl(w[:]); got != want {
					t.Fatalf("%q: scalarNextCtl %d, want %d", w, got, want)
				}
				if got, want := validTarget(w[:]), allTarget(w[:]); got != want {
					t.Fatalf("%q: validTarget %v, want %v", w, got, want)
				}
			}
		}
	}
}

func firstCtl(b []byte) int {
	for i, c := range b {
		if isCtl(c) {
			return i
		}
	}
	return len(b)
}

func allTarget(b []byte) bool {
	for _, c := range b {
		if !isTargetByte(c) {
			return false
		}
	}
	return true
}
