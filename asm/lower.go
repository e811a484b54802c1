package asm

// ToLower writes src into dst with the ASCII letters A-Z mapped to a-z and
// every other byte (including bytes >= 0x80) unchanged, and returns
// len(src). It panics if dst is shorter than src. dst may be src itself;
// partially overlapping slices give undefined results.
func ToLower(dst, src []byte) int {
	checkDst(len(dst), len(src))
	if len(src) > 0 {
		toLower(dst[:len(src)], src)
	}
	return len(src)
}

// ToLowerInPlace maps the ASCII letters of b to lower case.
func ToLowerInPlace(b []byte) { ToLower(b, b) }
