package json

// The tape is one []uint64 per document, in the layout of simdjson-go (and
// C++ simdjson) so that both engines feed the same accessors without a
// conversion pass. Each entry holds a tag in the top byte and a 56-bit payload:
//
//	'r' root:     opening: index one past the closing root; closing: index of the opening root
//	'{' '[':      index one past the matching '}' / ']'
//	'}' ']':      index of the matching '{' / '['
//	'"' string:   offset of the string bytes; the next entry is their length.
//	              With strBufBit the bytes are in the engine's string buffer
//	              (already unescaped); otherwise they are in the input, and
//	              strEscBit says they still contain backslash escapes.
//	'#' number:   (pure-Go engine) offset of the number text in the input;
//	              the next entry is its length. Converted lazily.
//	'l' 'u' 'd':  (simd engine) int64 / uint64 / float64 bits in the next entry.
//	't' 'f' 'n':  true, false, null.
const (
	tagShift   = 56
	payloadMsk = 1<<tagShift - 1

	tagRoot   = 'r'
	tagObject = '{'
	tagObjEnd = '}'
	tagArray  = '['
	tagArrEnd = ']'
	tagString = '"'
	tagNumber = '#'
	tagInt    = 'l'
	tagUint   = 'u'
	tagFloat  = 'd'
	tagTrue   = 't'
	tagFalse  = 'f'
	tagNull   = 'n'

	// strBufBit equals simdjson-go's STRINGBUFBIT (checked in a test).
	strBufBit = 1 << 55
	// strEscBit marks an input string that still holds escapes. simdjson-go
	// never sets it (its escaped strings go to its buffer).
	strEscBit = 1 << 54
	strOffMsk = strEscBit - 1
)

func tagOf(e uint64) byte       { return byte(e >> tagShift) }
func payloadOf(e uint64) uint64 { return e & payloadMsk }
func entry(tag byte, payload uint64) uint64 {
	return uint64(tag)<<tagShift | payload
}
