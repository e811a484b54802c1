// Package ascii holds the ASCII helpers of HTTP that the parsers, the
// server and its policy packages share, modelled on Go's
// net/http/internal/ascii: the RFC 9110 token check, ASCII case-insensitive
// comparison and optional-whitespace trimming. Each works on strings and
// byte slices alike, allocates nothing, and is small enough to inline.
package ascii

// The functions take string or []byte; every instantiation is the same
// loop (strings and slices index alike).
type text interface{ ~string | ~[]byte }

// tchar is the token character set of RFC 9110 §5.6.2, built from
// isTchar (and tested against it).
var tchar = func() (t [256]bool) {
	for c := range 256 {
		t[c] = isTchar(byte(c))
	}
	return t
}()

// isTchar is the readable form of RFC 9110 §5.6.2:
//
//	tchar = "!" / "#" / "$" / "%" / "&" / "'" / "*" / "+" / "-" / "." /
//	        "^" / "_" / "`" / "|" / "~" / DIGIT / ALPHA
func isTchar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	switch c {
	case '!', '#', '$', '%', '&', '\'', '*', '+', '-', '.', '^', '_', '`', '|', '~':
		return true
	}
	return false
}

// IsTchar reports whether c may appear in a token (RFC 9110 §5.6.2).
func IsTchar(c byte) bool { return tchar[c] }

// IsToken reports whether s is a token (RFC 9110 §5.6.2): one or more
// tchar, as field names and methods are.
func IsToken[S text](s S) bool {
	for i := 0; i < len(s); i++ {
		if !tchar[s[i]] {
			return false
		}
	}
	return len(s) > 0
}

// Lower returns c with A-Z folded to a-z.
func Lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// EqualFold reports whether a and b are equal under ASCII case folding,
// the comparison RFC 9110 prescribes for field names, tokens and
// schemes. Bytes outside A-Z and a-z must match exactly (unlike
// strings.EqualFold, no Unicode folding: "K" is not the Kelvin sign).
func EqualFold[A, B text](a A, b B) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		// Equal, or apart only in the case bit (0x20) of a letter.
		if d := a[i] ^ b[i]; d != 0 && (d != caseBit || (a[i]|caseBit)-'a' > 'z'-'a') {
			return false
		}
	}
	return true
}

// caseBit is the bit in which an ASCII letter's cases differ.
const caseBit = 'a' - 'A'

// IsOWS reports SP and HTAB, the optional whitespace of RFC 9110 §5.6.3.
func IsOWS(c byte) bool { return c == ' ' || c == '\t' }

// TrimOWS returns s without leading and trailing optional whitespace
// (RFC 9110 §5.6.3), a view into s.
func TrimOWS[S text](s S) S {
	for len(s) > 0 && IsOWS(s[0]) {
		s = s[1:]
	}
	for len(s) > 0 && IsOWS(s[len(s)-1]) {
		s = s[:len(s)-1]
	}
	return s
}
