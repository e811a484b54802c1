package asm

import "unicode/utf8"

// validUTF8Generic is the pure-Go twin of the UTF-8 kernels. The standard
// library's utf8.Valid already tests eight ASCII bytes at a time and decodes
// the rest with a table of first-byte properties (the "accept ranges"),
// which is as fast as pure Go gets without a second algorithm to keep
// correct; the kernels are tested against it and against a naive decoder.
func validUTF8Generic(b []byte) bool { return utf8.Valid(b) }
