package url

import (
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
// kernels. Below it the per-call cost of Classify and the prefix sum (a few
// ns each) exceeds a scalar table loop over the bytes; URL components are
// mostly short. Measured on the shared 2-core AVX-512 dev machine with Go
// 1.26.8 while the kernels were still the pure-Go twins; revisit when the
// assembly lands.
const simdEncodeMin = 64

// encodeChunk is how many bytes the SIMD encoder handles per round: the
// per-byte positions fit uint16 (3*256 < 65536) and the scratch arrays stay
// small enough for the stack.
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

// appendEncodedSIMD is the data-parallel encoder: classify 64 bytes at a
// time into a bit mask of bytes to encode; when a chunk has none, copy it;
// otherwise turn the mask into per-byte output widths (1 or 3), take their
// exclusive prefix sum to get every output position, and write each byte's
// three candidate output bytes unconditionally at its position. A plain
// byte's two extra writes are overwritten by the next byte, so the loop has
// no data-dependent branch; the buffer carries two bytes of slack for the
// last one.
func appendEncodedSIMD(dst []byte, src string, set *encodeSet) []byte {
	sc := encodeScratchPool.Get().(*encodeScratch)
	defer encodeScratchPool.Put(sc)
	masks, pos := &sc.masks, &sc.pos
	for len(src) > 0 {
		n := min(len(src), encodeChunk)
		chunk := stringBytes(src[:n])
		words := asm.Classify(masks[:], chunk, set.t)
		var any uint64
		for _, m := range masks[:words] {
			any |= m
		}
		if any == 0 {
			dst = append(dst, chunk...)
			src = src[n:]
			continue
		}
		for i := range n {
			bit := uint16(masks[i/asm.BlockSize]>>(i%asm.BlockSize)) & 1
			pos[i] = plainWidth + (encodedWidth-plainWidth)*bit
		}
		total := int(asm.ExclusivePrefixSum16(pos[:n], pos[:n], 0))
		start := len(dst)
		dst = grow(dst, total+encodedWidth-plainWidth)
		out := dst[start:]
		for i, b := range chunk {
			p := int(pos[i])
			enc := -byte(masks[i/asm.BlockSize] >> (i % asm.BlockSize) & 1) // 0xFF if encoded
			out[p] = b ^ ((b ^ '%') & enc)
			out[p+1] = upperHex[b>>4]
			out[p+2] = upperHex[b&15]
		}
		dst = dst[:start+total]
		src = src[n:]
	}
	return dst
}

// encodeScratch is the SIMD encoder's working memory. It lives in a pool
// rather than on the stack because slices passed to the asm kernels escape
// (the dispatch is opaque to escape analysis); the pool keeps the encoder
// allocation-free in steady state.
type encodeScratch struct {
	masks [encodeChunk / asm.BlockSize]uint64
	pos   [encodeChunk]uint16
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

// needsEncoding reports whether any byte of s is in set.
func needsEncoding(s string, set *encodeSet) bool {
	for i := 0; i < len(s); i++ {
		if set.in[s[i]] {
			return true
		}
	}
	return false
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
