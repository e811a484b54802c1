package asm

// Mask slots of one block in JSONIndex's masks.
const (
	// JSONStops holds the block's string stops: '"', '\\' and the bytes
	// below 0x20.
	JSONStops = 0
	// JSONPlainEnds holds the closing quotes of the plain strings: those
	// with no backslash and no control byte between their quotes. It
	// tells a parser's second stage that a string is plain from one bit
	// at its end, where the specials themselves would need the words of
	// every block the string spans.
	JSONPlainEnds = 1
	// JSONMaskWords is the number of words per block.
	JSONMaskWords = 2
)

// jsonPad is the byte that stands for the bytes past the end of the input
// in the last, partial block: whitespace, in no class JSONIndex reports.
const jsonPad = ' '

// jsonVBMI2 selects, at the AVX-512 level, the kernel that writes positions
// with vpcompressb (AVX512_VBMI2); decided once, and a test hook so that
// both AVX-512 kernels are tested where the CPU has VBMI2.
var jsonVBMI2 = detectVBMI2()

// JSONCarry is what JSONIndex passes from one call to the next over
// consecutive blocks of one document; its zero value starts a document.
type JSONCarry struct {
	// s is, in order: bit 0 set when the next block's first byte is
	// escaped; all ones when the next block starts inside a string; bit
	// 0 set when the last byte was part of a scalar run; bit 0 set when
	// the next block starts inside a string that is plain so far.
	s [4]uint64
}

// JSONIndex is the first stage of a JSON parser in the manner of simdjson,
// over src in 64-byte blocks: it classifies each block's bytes (quotes,
// backslashes, control bytes, JSON whitespace, the operators '{', '}',
// '[', ']', ':' and ','), finds the escaped bytes (a backslash escapes the
// next byte unless it is escaped itself), the bytes inside strings (from an
// unescaped quote to the next one), and the structural bytes: operators
// and opening quotes outside strings, and the first byte of every other run
// of non-whitespace outside strings. It writes base plus the offset of
// each structural byte to pos, in order, and returns how many; and for
// each block k it writes masks[2k+JSONStops] and masks[2k+JSONPlainEnds].
// Bytes past the end of src read as whitespace.
//
// For n = ceil(len(src)/64) blocks, len(masks) must be at least 2*n and
// len(pos) at least 64*n, else JSONIndex panics. It may write anywhere in
// pos[:64*n]; only the first entries (its result) are defined. Consecutive
// calls with the same carry index consecutive parts of one document when
// every part but the last is a whole number of blocks.
func JSONIndex(pos []uint32, masks []uint64, src []byte, base uint32, c *JSONCarry) int {
	n := (len(src) + BlockSize - 1) / BlockSize
	if len(masks) < JSONMaskWords*n || len(pos) < BlockSize*n {
		panic("asm: JSONIndex: bad lengths")
	}
	whole := len(src) &^ (BlockSize - 1)
	k := 0
	if whole > 0 {
		k = jsonIndex(pos, masks, src[:whole], base, c)
	}
	if whole < len(src) {
		// The partial block, from a padded copy: the kernels load whole
		// blocks.
		var last [BlockSize]byte
		for i := copy(last[:], src[whole:]); i < len(last); i++ {
			last[i] = jsonPad
		}
		k += jsonIndex(pos[k:], masks[whole/BlockSize*JSONMaskWords:], last[:], base+uint32(whole), c)
	}
	return k
}
