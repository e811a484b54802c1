package url

import "strconv"

// IPv4 parsing, URL Standard §3.5 "IPv4 parser" and "IPv4 number parser".
// Every WHATWG form is accepted: 1 to 4 parts, each decimal, octal (leading
// 0) or hex (0x), the last part filling the remaining bytes.

const (
	maxIPv4Parts = 4
	// ipv4Overflow caps a part's value while parsing: anything above
	// 2^32 fails later anyway, and the cap keeps uint64 from wrapping on
	// long digit strings.
	ipv4Overflow = 1 << 40
)

// parseIPv4Number is the IPv4 number parser. ok is false on failure.
func parseIPv4Number(s string) (n uint64, ok bool) {
	if s == "" {
		return 0, false
	}
	radix := uint64(10)
	if len(s) >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		s, radix = s[2:], 16
	} else if len(s) >= 2 && s[0] == '0' {
		s, radix = s[1:], 8
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		var d uint64
		switch {
		case c >= '0' && c <= '9':
			d = uint64(c - '0')
		case radix == 16 && c >= 'a' && c <= 'f':
			d = uint64(c-'a') + 10
		case radix == 16 && c >= 'A' && c <= 'F':
			d = uint64(c-'A') + 10
		default:
			return 0, false
		}
		if d >= radix {
			return 0, false
		}
		n = n*radix + d
		if n > ipv4Overflow {
			n = ipv4Overflow
		}
	}
	return n, true
}

// endsInNumber is the "ends in a number checker": does the last label of a
// domain look numeric, so that the host must be parsed as IPv4?
func endsInNumber(s string) bool {
	end := len(s)
	if end > 0 && s[end-1] == '.' {
		if end == 1 {
			return false
		}
		end--
	}
	// A numeric label (decimal, octal, or hex with "0x", which may be
	// bare) ends in a digit, a hex letter or 'x'. Most domains end in a
	// letter past 'f' ("com", "org"): rejecting them here skips the
	// backward scan for the label.
	if end == 0 {
		return false
	}
	if c := s[end-1] | 0x20; !isASCIIDigit(s[end-1]) && (c < 'a' || c > 'f') && c != 'x' {
		return false
	}
	start := end
	for start > 0 && s[start-1] != '.' {
		start--
	}
	last := s[start:end]
	if last == "" {
		return false
	}
	allDigits := true
	for i := 0; i < len(last); i++ {
		if last[i] < '0' || last[i] > '9' {
			allDigits = false
			break
		}
	}
	if allDigits {
		return true
	}
	_, ok := parseIPv4Number(last)
	return ok
}

// parseIPv4 is the IPv4 parser; it returns the address as a uint32.
func parseIPv4(s string) (uint32, error) {
	if len(s) > 0 && s[len(s)-1] == '.' && len(s) > 1 {
		s = s[:len(s)-1]
	}
	var nums [maxIPv4Parts]uint64
	n := 0
	for {
		i := 0
		for i < len(s) && s[i] != '.' {
			i++
		}
		if n == maxIPv4Parts {
			return 0, ErrInvalidIPv4
		}
		v, ok := parseIPv4Number(s[:i])
		if !ok {
			return 0, ErrInvalidIPv4
		}
		nums[n] = v
		n++
		if i == len(s) {
			break
		}
		s = s[i+1:]
	}
	for _, v := range nums[:n-1] {
		if v > 255 {
			return 0, ErrInvalidIPv4
		}
	}
	last := nums[n-1]
	if last >= 1<<(8*(5-n)) {
		return 0, ErrInvalidIPv4
	}
	addr := last
	for i, v := range nums[:n-1] {
		addr += v << (8 * (3 - i))
	}
	return uint32(addr), nil
}

// appendIPv4 is the IPv4 serializer.
func appendIPv4(dst []byte, a uint32) []byte {
	for i := 3; i >= 0; i-- {
		dst = strconv.AppendUint(dst, uint64(a>>(8*i)&0xff), 10)
		if i > 0 {
			dst = append(dst, '.')
		}
	}
	return dst
}
