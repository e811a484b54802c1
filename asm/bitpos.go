package asm

// BitPositions writes, for every set bit j of masks[k], in order of k and
// then j, the position base+64*k+j to dst, and returns how many it wrote:
// it turns the bit masks of Classify (or masks computed from them) into a
// list of offsets, the way simdjson builds its structural index. Positions
// are uint32, so base+64*len(masks) must fit.
//
// dst must have room for every bit: len(dst) >= 64*len(masks), else
// BitPositions panics. It may write anywhere in dst[:64*len(masks)]; only
// the first n entries (n its result) are defined.
func BitPositions(dst []uint32, masks []uint64, base uint32) int {
	if len(dst) < BlockSize*len(masks) {
		panic("asm: BitPositions: dst too short")
	}
	if len(masks) == 0 {
		return 0
	}
	return bitPositions(dst, masks, base)
}
