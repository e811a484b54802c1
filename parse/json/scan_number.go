package json

// scanNumber checks the number grammar of RFC 8259 section 6 starting at
// b[i] ('-' or a digit) and returns the index after it:
//
//	number = [ minus ] int [ frac ] [ exp ]
//	int    = zero / ( digit1-9 *DIGIT )
//	frac   = decimal-point 1*DIGIT
//	exp    = e [ minus / plus ] 1*DIGIT
//
// A leading zero ends the int part, so "01" stops after "0" and the caller
// rejects the "1" as an unexpected byte.
func scanNumber(b []byte, i int) (int, error) {
	if b[i] == '-' {
		i++
	}
	if i >= len(b) {
		return i, ErrUnexpectedEOF
	}
	switch c := b[i]; {
	case c == '0':
		i++
	case c >= '1' && c <= '9':
		i = skipDigits(b, i+1)
	default:
		return i, ErrInvalidNumber
	}
	if i < len(b) && b[i] == '.' {
		i++
		j := skipDigits(b, i)
		if j == i {
			return j, numErrAt(b, j)
		}
		i = j
	}
	if i < len(b) && b[i]|0x20 == 'e' {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := skipDigits(b, i)
		if j == i {
			return j, numErrAt(b, j)
		}
		i = j
	}
	return i, nil
}

func numErrAt(b []byte, i int) error {
	if i >= len(b) {
		return ErrUnexpectedEOF
	}
	return ErrInvalidNumber
}

func skipDigits(b []byte, i int) int {
	for i < len(b) && b[i]-'0' <= 9 {
		i++
	}
	return i
}
