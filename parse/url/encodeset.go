package url

import "github.com/simdedge/simdedge/asm"

// Percent-encode sets, URL Standard §1.3 "Percent-encoded bytes". Each set
// is defined by a readable predicate below; the 256-entry lookup table and
// the SIMD class table are both built from that predicate at init, and a
// test checks every byte of the table against it.

func isC0ControlSet(b byte) bool { return b < 0x20 || b > 0x7e }

func isFragmentSet(b byte) bool {
	return isC0ControlSet(b) || b == ' ' || b == '"' || b == '<' || b == '>' || b == '`'
}

func isQuerySet(b byte) bool {
	return isC0ControlSet(b) || b == ' ' || b == '"' || b == '#' || b == '<' || b == '>'
}

func isSpecialQuerySet(b byte) bool { return isQuerySet(b) || b == '\'' }

func isPathSet(b byte) bool {
	return isQuerySet(b) || b == '?' || b == '^' || b == '`' || b == '{' || b == '}'
}

func isUserinfoSet(b byte) bool {
	return isPathSet(b) || b == '/' || b == ':' || b == ';' || b == '=' || b == '@' ||
		(b >= '[' && b <= '^') || b == '|'
}

func isComponentSet(b byte) bool {
	return isUserinfoSet(b) || (b >= '$' && b <= '&') || b == '+' || b == ','
}

func isFormSet(b byte) bool {
	return isComponentSet(b) || b == '!' || (b >= '\'' && b <= ')') || b == '~'
}

// encodeSet is one percent-encode set in the two forms the encoder uses.
type encodeSet struct {
	in [256]bool       // in[b]: b must be percent-encoded
	t  *asm.ClassTable // one class, the same set, for asm.Classify; nil if it did not fit
	fn func(byte) bool // the defining predicate, for tests
}

func newEncodeSet(fn func(byte) bool) *encodeSet {
	s := &encodeSet{fn: fn}
	for b := range 256 {
		s.in[b] = fn(byte(b))
	}
	// Every set here fits the kernel's 8 nibble rectangles; if a future
	// set did not, the encoder falls back to the scalar loop.
	s.t, _ = asm.NewClassTable(fn)
	return s
}

var (
	c0ControlSet    = newEncodeSet(isC0ControlSet)
	fragmentSet     = newEncodeSet(isFragmentSet)
	querySet        = newEncodeSet(isQuerySet)
	specialQuerySet = newEncodeSet(isSpecialQuerySet)
	pathSet         = newEncodeSet(isPathSet)
	userinfoSet     = newEncodeSet(isUserinfoSet)
	componentSet    = newEncodeSet(isComponentSet)
	formSet         = newEncodeSet(isFormSet)
)
