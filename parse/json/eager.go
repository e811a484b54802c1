package json

import (
	"encoding/binary"
	"math"
	"strconv"
)

// Options.Eager: the work the default parse leaves to Int, Float and
// AppendString, done once for the whole document while the tape is
// built, as C++ simdjson's DOM parse does, with no per-value call through
// the public API: each number is converted (its two tape entries hold an
// int64, uint64 or float64 tag and its bits instead of the text's offset
// and length), and each string with escapes is unescaped into the
// document's string buffer. The index stage does it as it goes
// (buildIndexed with a strBuf); the other paths, after the tape is built
// (convertTape). Plain strings
// stay where they are in the input: they already are their unescaped
// form, so there is nothing to do for them.
//
// A number is converted only when the converted entry answers Int, Uint
// and Float exactly as its text does; the few that do not ("-0", whose
// Float is -0 but whose Int is 0; integers beyond uint64; floats beyond
// float64's range) keep their text, and the accessors convert them on
// each call as before.

// strBuf is the buffer the unescaped strings go to (Document.strs).
type strBuf struct{ b []byte }

// appendString unescapes s (a string's bytes between its quotes, with
// escapes) into u and appends its tape entries.
func (u *strBuf) appendString(tape []uint64, s []byte) []uint64 {
	at := len(u.b)
	u.b = appendUnescaped(u.b, s)
	return append(tape, entry(tagString, uint64(at)|strBufBit), uint64(len(u.b)-at))
}

// convertTape converts the numbers and escaped strings of a tape built
// without cv (by buildTape: NDJSON, short inputs, no SIMD kernels, or a
// document the index stage gave up on) in place, into u.
func convertTape(t []uint64, msg []byte, u *strBuf) {
	for i := 1; i+1 < len(t); i++ {
		e := t[i]
		switch tagOf(e) {
		case tagNumber:
			off := payloadOf(e)
			if tag, bits, ok := convertNumber(msg[off : off+t[i+1]]); ok {
				t[i], t[i+1] = entry(tag, 0), bits
			}
			i++
		case tagString:
			if p := payloadOf(e); p&strEscBit != 0 {
				off := p & strOffMsk
				at := len(u.b)
				u.b = appendUnescaped(u.b, msg[off:off+t[i+1]])
				t[i], t[i+1] = entry(tagString, uint64(at)|strBufBit), uint64(len(u.b)-at)
			}
			i++
		}
	}
}

// pow10 holds the powers of ten that float64 represents exactly.
var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// convertNumber converts the text of a valid JSON number. An integer gives
// tagInt (in int64's range) or tagUint (beyond it, up to 19 digits); any
// other number gives tagFloat with its float64 bits. ok is false where the
// text must stay text (see above).
func convertNumber(t []byte) (tag byte, bits uint64, ok bool) {
	neg := t[0] == '-'
	j := 0
	if neg {
		j = 1
	}
	// The digits of the int and fraction parts, as one integer m, up to
	// 19 of them (below 10^19, so m cannot overflow).
	var m uint64
	nd, exp := 0, 0
	j, m, nd = readDigits(t, j, m, nd)
	if j == len(t) {
		if nd > 19 || (neg && m == 0) {
			return 0, 0, false
		}
		if !neg {
			if m > math.MaxInt64 {
				return tagUint, m, true
			}
			return tagInt, m, true
		}
		if m > 1<<63 {
			return 0, 0, false
		}
		return tagInt, uint64(-int64(m)), true
	}
	if t[j] == '.' {
		k := j + 1
		j, m, nd = readDigits(t, k, m, nd)
		exp = k - j
	}
	if j < len(t) { // exponent
		j++
		eneg := t[j] == '-'
		if t[j] == '-' || t[j] == '+' {
			j++
		}
		e := 0
		for ; j < len(t) && e < 10000; j++ {
			e = e*10 + int(t[j]-'0')
		}
		if eneg {
			e = -e
		}
		exp += e
	}
	// Clinger's fast path: a mantissa below 2^53 and a power of ten that
	// float64 holds exactly give the correctly rounded result with one
	// multiplication or division (one rounding of exact operands).
	if nd <= 19 && m < 1<<53 && exp >= -22 && exp <= 22 {
		f := float64(m)
		if exp < 0 {
			f /= pow10[-exp]
		} else {
			f *= pow10[exp]
		}
		if neg {
			f = -f
		}
		return tagFloat, math.Float64bits(f), true
	}
	f, err := strconv.ParseFloat(bytesToString(t), 64)
	if err != nil || math.IsInf(f, 0) {
		return 0, 0, false
	}
	return tagFloat, math.Float64bits(f), true
}

// readDigits appends the run of digits at t[j:] to m, which holds nd
// digits, and returns the index after the run, m and the new count. Past
// 19 digits m overflows, and the caller does not use it. Eight digits at a
// time while they fit (twitter.json's ids have 18).
func readDigits(t []byte, j int, m uint64, nd int) (int, uint64, int) {
	for len(t)-j >= 8 && nd <= 19-8 {
		w := binary.LittleEndian.Uint64(t[j:])
		if !eightDigits(w) {
			break
		}
		m = m*1e8 + digits8(w)
		j += 8
		nd += 8
	}
	for ; j < len(t) && t[j]-'0' <= 9; j++ {
		m = m*10 + uint64(t[j]-'0')
		nd++
	}
	return j, m, nd
}

// eightDigits reports whether the eight bytes of w are all ASCII digits:
// each byte's high nibble is 3, and adding 6 does not carry into it.
func eightDigits(w uint64) bool {
	const hi = 0xF0F0F0F0F0F0F0F0
	return w&hi|(w+0x0606060606060606)&hi>>4 == 0x3333333333333333
}

// digits8 is the value of eight ASCII digits, the first in the low byte
// of w: adjacent digits combined into pairs, pairs into fours, fours into
// the eight, each step one multiply-add across lanes.
func digits8(w uint64) uint64 {
	w -= 0x3030303030303030
	w = w*10 + w>>8 // each even byte: 10*first + second of its pair
	const mask = 0x000000FF000000FF
	// Pairs 0 and 2 by 100 and 10^6, pairs 1 and 3 by 1 and 10^4, summed
	// in the upper half.
	return (w&mask*(100+1000000<<32) + w>>16&mask*(1+10000<<32)) >> 32
}
