package url

import (
	"errors"
	"unicode/utf8"
)

// Punycode, RFC 3492 §6, for IDNA labels.

const (
	acePrefix   = "xn--"
	pcBase      = 36
	pcTMin      = 1
	pcTMax      = 26
	pcSkew      = 38
	pcDamp      = 700
	pcInitBias  = 72
	pcInitN     = 128
	pcDelimiter = '-'
	// pcMaxRune bounds decoded code points to Unicode's range.
	pcMaxRune = utf8.MaxRune
)

var errPunycode = errors.New("url: invalid punycode")

func pcAdapt(delta, numPoints int32, first bool) int32 {
	if first {
		delta /= pcDamp
	} else {
		delta /= 2
	}
	delta += delta / numPoints
	k := int32(0)
	for delta > ((pcBase-pcTMin)*pcTMax)/2 {
		delta /= pcBase - pcTMin
		k += pcBase
	}
	return k + (pcBase-pcTMin+1)*delta/(delta+pcSkew)
}

func pcDigit(d int32) byte {
	if d < 26 {
		return byte('a' + d)
	}
	return byte('0' + d - 26)
}

func pcValue(c byte) (int32, bool) {
	switch {
	case c >= '0' && c <= '9':
		return int32(c-'0') + 26, true
	case c >= 'a' && c <= 'z':
		return int32(c - 'a'), true
	case c >= 'A' && c <= 'Z':
		return int32(c - 'A'), true
	}
	return 0, false
}

// punycodeDecode appends the code points decoded from the ASCII string s
// (without the "xn--" prefix) to dst.
func punycodeDecode(dst []rune, s string) ([]rune, error) {
	start := len(dst)
	basic := 0
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == pcDelimiter {
			basic = i
			break
		}
	}
	for i := 0; i < basic; i++ {
		if s[i] >= utf8.RuneSelf {
			return dst, errPunycode
		}
		dst = append(dst, rune(s[i]))
	}
	if basic > 0 {
		basic++
	}
	n, bias, i := int32(pcInitN), int32(pcInitBias), int32(0)
	for pos := basic; pos < len(s); {
		oldi, w := i, int32(1)
		for k := int32(pcBase); ; k += pcBase {
			if pos >= len(s) {
				return dst, errPunycode
			}
			digit, ok := pcValue(s[pos])
			pos++
			if !ok {
				return dst, errPunycode
			}
			if digit > (pcMaxRune-i)/w {
				return dst, errPunycode
			}
			i += digit * w
			t := k - bias
			if t < pcTMin {
				t = pcTMin
			} else if t > pcTMax {
				t = pcTMax
			}
			if digit < t {
				break
			}
			if w > pcMaxRune/(pcBase-t) {
				return dst, errPunycode
			}
			w *= pcBase - t
		}
		out := int32(len(dst)-start) + 1
		bias = pcAdapt(i-oldi, out, oldi == 0)
		if i/out > pcMaxRune-n {
			return dst, errPunycode
		}
		n += i / out
		i %= out
		if n > pcMaxRune || (n >= 0xD800 && n <= 0xDFFF) {
			return dst, errPunycode
		}
		dst = append(dst, 0)
		at := start + int(i)
		copy(dst[at+1:], dst[at:])
		dst[at] = n
		i++
	}
	return dst, nil
}

// punycodeEncode appends the punycode of label (without prefix) to dst.
func punycodeEncode(dst []byte, label []rune) ([]byte, error) {
	b := 0
	for _, r := range label {
		if r < pcInitN {
			dst = append(dst, byte(r))
			b++
		}
	}
	h := b
	if b > 0 {
		dst = append(dst, pcDelimiter)
	}
	n, delta, bias := int32(pcInitN), int32(0), int32(pcInitBias)
	for h < len(label) {
		m := int32(pcMaxRune + 1)
		for _, r := range label {
			if r >= n && r < m {
				m = r
			}
		}
		if (m - n) > (1<<31-1-delta)/int32(h+1) {
			return dst, errPunycode
		}
		delta += (m - n) * int32(h+1)
		n = m
		for _, r := range label {
			if r < n {
				delta++
			}
			if r == n {
				q := delta
				for k := int32(pcBase); ; k += pcBase {
					t := k - bias
					if t < pcTMin {
						t = pcTMin
					} else if t > pcTMax {
						t = pcTMax
					}
					if q < t {
						break
					}
					dst = append(dst, pcDigit(t+(q-t)%(pcBase-t)))
					q = (q - t) / (pcBase - t)
				}
				dst = append(dst, pcDigit(q))
				bias = pcAdapt(delta, int32(h+1), h == b)
				delta = 0
				h++
			}
		}
		delta++
		n++
	}
	return dst, nil
}
