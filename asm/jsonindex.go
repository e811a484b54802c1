package asm

// JSONClasses is the number of Classify masks per 64-byte block that
// JSONStructurals reads, in this order: '"'; '\\'; the string stops ('"',
// '\\' and the bytes below 0x20); JSON whitespace (space, tab, line feed,
// carriage return); and the operators '{', '}', '[', ']', ':' and ','.
const JSONClasses = 5

// Mask slots of one block in JSONStructurals' masks.
const (
	// JSONStops holds the block's string stops, as Classify gave them.
	JSONStops = 0
	// JSONSpecials holds the backslashes and control bytes inside strings.
	JSONSpecials = 1
	// JSONMaskWords is the number of words per block.
	JSONMaskWords = 2
)

// JSONCarry is what JSONStructurals passes from one call to the next over
// consecutive blocks of one document; its zero value starts a document.
type JSONCarry struct {
	// s is, in order: bit 0 set when the next block's first byte is
	// escaped; all ones when the next block starts inside a string; bit
	// 0 set when the last byte was part of a scalar run.
	s [3]uint64
}

// JSONStructurals is the first stage of a JSON parser in the manner of
// simdjson: from the Classify masks of consecutive 64-byte blocks (cls,
// JSONClasses words per block, see JSONClasses), it finds the escaped bytes
// (a backslash escapes the next byte unless it is escaped itself), the
// bytes inside strings (from an unescaped quote to the next one), and the
// structural bytes: operators and opening quotes outside strings, and the
// first byte of every other run of non-whitespace outside strings. It
// writes base plus the offset of each structural byte to pos, in order, and
// returns how many; and for each block k it writes masks[2k+JSONStops] and
// masks[2k+JSONSpecials].
//
// Bytes past the end of the input, which Classify leaves in no class, read
// as one more run of non-whitespace, so a position at the input's length
// may follow the last real one.
//
// len(cls) must be a multiple of JSONClasses; for n blocks, len(masks) >=
// 2*n and len(pos) >= 64*n, else JSONStructurals panics. It may write
// anywhere in pos[:64*n]; only the first entries (its result) are defined.
func JSONStructurals(pos []uint32, masks, cls []uint64, base uint32, c *JSONCarry) int {
	n := len(cls) / JSONClasses
	if n*JSONClasses != len(cls) || len(masks) < JSONMaskWords*n || len(pos) < BlockSize*n {
		panic("asm: JSONStructurals: bad lengths")
	}
	if n == 0 {
		return 0
	}
	return jsonStructurals(pos, masks, cls, base, c)
}
