package url

import (
	"encoding/binary"
	"math/bits"
	"sync"

	"github.com/simdedge/simdedge/asm"
)

const upperHex = "0123456789ABCDEF"

// Encoded widths: a byte outside the set is copied (1 byte), a byte in it
// becomes "%XY" (3 bytes).
const (
	plainWidth   = 1
	encodedWidth = 3
)

// simdEncodeMin is the input length from which appendEncoded uses the asm
// kernels. Below it the per-call cost of Classify (and of the pool) exceeds
// a scalar loop; from 64 bytes on the SIMD encoder was faster for plain,
// sparse and dense inputs alike (BenchmarkEncode on the shared 2-core
// AVX-512 dev machine, Go 1.26.8, asm AVX-512 kernels; 1 KiB: 4x plain,
// 2x sparse, 1.4x dense). URL components are mostly shorter.
const simdEncodeMin = 64

// encodeChunk is how many bytes the SIMD encoder classifies per
// asm.Classify call (4 mask words): long enough to amortise the call, short
// enough to keep the scratch small.
const encodeChunk = 256

// appendEncoded appends src to dst, percent-encoding (UTF-8 percent-encode,
// §1.3) every byte in set. Bytes >= 0x80 are in every set, so encoding byte
// by byte equals encoding the UTF-8 of each code point.
func appendEncoded(dst []byte, src string, set *encodeSet) []byte {
	if len(src) >= simdEncodeMin && set.t != nil {
		return appendEncodedSIMD(dst, src, set)
	}
	return appendEncodedScalar(dst, src, set)
}

// appendEncodedScalar copies each run of bytes outside the set in one
// append and encodes the bytes in between.
func appendEncodedScalar(dst []byte, src string, set *encodeSet) []byte {
	for {
		i := 0
		for i < len(src) && !set.in[src[i]] {
			i++
		}
		dst = append(dst, src[:i]...)
		if i == len(src) {
			return dst
		}
		b := src[i]
		dst = append(dst, '%', upperHex[b>>4], upperHex[b&15])
		src = src[i+1:]
	}
}

// appendEncodedSIMD is the data-parallel encoder. asm.Classify marks the
// bytes to encode, 64 per mask word. A block without marks is copied whole.
// Otherwise each byte's output width (1, or 3 for "%XY") is expanded from
// the mask with a byte-indexed table, asm.ExclusivePrefixSum8 turns widths
// into output positions (64 bytes need at most 192 positions, so 8-bit
// lanes suffice), and every byte writes its three candidate output bytes
// at its position as one 4-byte store, without a branch: a plain byte's
// extra bytes are overwritten by the next byte's store, and the output has
// writeSlack bytes of slack for the last one.
func appendEncodedSIMD(dst []byte, src string, set *encodeSet) []byte {
	sc := encodeScratchPool.Get().(*encodeScratch)
	defer encodeScratchPool.Put(sc)
	for len(src) > 0 {
		n := min(len(src), encodeChunk)
		chunk := src[:n]
		words := asm.Classify(sc.masks[:], stringBytes(chunk), set.t)
		for w, m := range sc.masks[:words] {
			block := chunk[w*asm.BlockSize : min(n, (w+1)*asm.BlockSize)]
			if m == 0 {
				dst = append(dst, block...)
				continue
			}
			if bits.OnesCount64(m) < denseMin {
				dst = appendSparse(dst, block, m)
				continue
			}
			for k := range asm.BlockSize / 8 {
				binary.LittleEndian.PutUint64(sc.width[8*k:], widthTable[uint8(m>>(8*k))])
			}
			width, pos := sc.width[:len(block)], sc.pos[:len(block)]
			total := int(asm.ExclusivePrefixSum8(pos, width, 0))
			start := len(dst)
			dst = grow(dst, total+writeSlack)
			out := dst[start:]
			for j := 0; j < len(block); j++ {
				p, c := int(pos[j]), uint32(block[j])
				enc := -uint32(width[j] >> 1) // all ones when the width is 3
				binary.LittleEndian.PutUint32(out[p:], c^((c^percentTriplet[c])&enc))
			}
			dst = dst[:start+total]
		}
		src = src[n:]
	}
	return dst
}

// denseMin is the number of marked bytes in a 64-byte block from which
// the prefix-sum writer beats walking the mask bits and copying the runs
// between them (BenchmarkEncode: the writer is about 2x faster when every
// byte is encoded and about 3x slower at one byte in 16; measured on the
// shared 2-core AVX-512 dev machine, Go 1.26.8, asm AVX-512 kernels).
const denseMin = 16

// appendSparse encodes a block with few marked bytes: copy each run of
// plain bytes, escape each marked byte (m has bit j set for block[j]).
func appendSparse(dst []byte, block string, m uint64) []byte {
	prev := 0
	for m != 0 {
		j := bits.TrailingZeros64(m)
		c := block[j]
		dst = append(append(dst, block[prev:j]...), '%', upperHex[c>>4], upperHex[c&15])
		prev = j + 1
		m &= m - 1
	}
	return append(dst, block[prev:]...)
}

// writeSlack is how far past the last output byte the branch-free writer
// may store: each byte is written as one 4-byte word.
const writeSlack = 3

// percentTriplet[c] is "%XY" for byte c as a little-endian word, so one
// store writes the whole escape.
var percentTriplet = func() (t [256]uint32) {
	for c := range 256 {
		t[c] = '%' | uint32(upperHex[c>>4])<<8 | uint32(upperHex[c&15])<<16
	}
	return t
}()

// widthTable[m] holds the output widths of 8 consecutive bytes, one per
// byte of the uint64 (little-endian), given their 8 mask bits m.
var widthTable = func() (t [256]uint64) {
	for m := range 256 {
		for j := range 8 {
			w := uint64(plainWidth)
			if m>>j&1 != 0 {
				w = encodedWidth
			}
			t[m] |= w << (8 * j)
		}
	}
	return t
}()

// encodeScratch is the SIMD encoder's working memory. It lives in a pool
// rather than on the stack because slices passed to the asm kernels escape
// (the dispatch is opaque to escape analysis); the pool keeps the encoder
// allocation-free in steady state.
type encodeScratch struct {
	masks [encodeChunk / asm.BlockSize]uint64
	width [asm.BlockSize]uint8
	pos   [asm.BlockSize]uint8
}

var encodeScratchPool = sync.Pool{New: func() any { return new(encodeScratch) }}

// grow extends dst by n bytes (contents unspecified), reusing capacity.
func grow(dst []byte, n int) []byte {
	if cap(dst)-len(dst) < n {
		nd := make([]byte, len(dst), 2*cap(dst)+n)
		copy(nd, dst)
		dst = nd
	}
	return dst[:len(dst)+n]
}

func unhex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// appendDecoded appends the percent-decoding of s (§1.3 "percent-decode"):
// "%XY" with two hex digits becomes the byte 0xXY, everything else
// (including malformed escapes) is copied as is.
func appendDecoded(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '%' && i+2 < len(s) {
			h, ok1 := unhex(s[i+1])
			l, ok2 := unhex(s[i+2])
			if ok1 && ok2 {
				dst = append(dst, h<<4|l)
				i += 2
				continue
			}
		}
		dst = append(dst, c)
	}
	return dst
}

// PercentEncode returns s UTF-8 percent-encoded with the component
// percent-encode set (what encodeURIComponent encodes, plus a few more).
func PercentEncode(s string) string { return string(appendEncoded(nil, s, componentSet)) }

// PercentDecode returns the percent-decoding of s; malformed escapes are
// kept literally, as the standard specifies.
func PercentDecode(s string) string { return string(appendDecoded(nil, s)) }
