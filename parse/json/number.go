package json

import (
	"errors"
	"math"
	"strconv"
)

// ErrNotInteger is returned by Int and Uint for a number written with a
// fraction or an exponent: the RFC 8259 text decides the kind, as with
// simdjson-go, not the value ("1.0" is not an integer).
var ErrNotInteger = errors.New("json: number is not an integer")

// floatOverflowedInteger is simdjson-go's FloatOverflowedInteger flag in the
// payload of a 'd' entry: the text was an integer out of 64-bit range.
const floatOverflowedInteger = 1

// Int returns the number as int64 when its text is an integer in range.
func (v Value) Int() (int64, error) {
	e, _ := v.entry()
	switch tagOf(e) {
	case tagInt:
		return int64(v.d.tape[v.i+1]), nil
	case tagUint:
		return 0, ErrRange
	case tagFloat:
		if payloadOf(e)&floatOverflowedInteger != 0 {
			return 0, ErrRange
		}
		return 0, ErrNotInteger
	case tagNumber:
		return parseInt(v.d.numberText(v.i))
	}
	return 0, ErrWrongKind
}

// Uint returns the number as uint64 when its text is a non-negative integer
// in range ("-0" is accepted as 0).
func (v Value) Uint() (uint64, error) {
	e, _ := v.entry()
	switch tagOf(e) {
	case tagInt:
		n := int64(v.d.tape[v.i+1])
		if n < 0 {
			return 0, ErrRange
		}
		return uint64(n), nil
	case tagUint:
		return v.d.tape[v.i+1], nil
	case tagFloat:
		if payloadOf(e)&floatOverflowedInteger != 0 {
			return 0, ErrRange
		}
		return 0, ErrNotInteger
	case tagNumber:
		t := v.d.numberText(v.i)
		neg := t[0] == '-'
		if neg {
			t = t[1:]
		}
		u, err := parseUint(t)
		if err != nil {
			return 0, err
		}
		if neg && u != 0 {
			return 0, ErrRange
		}
		return u, nil
	}
	return 0, ErrWrongKind
}

// Float returns the number as the float64 nearest to its text (correctly
// rounded, like strconv.ParseFloat). Out of range it returns ±Inf and ErrRange.
func (v Value) Float() (float64, error) {
	e, _ := v.entry()
	switch tagOf(e) {
	case tagInt:
		return float64(int64(v.d.tape[v.i+1])), nil
	case tagUint:
		return float64(v.d.tape[v.i+1]), nil
	case tagFloat:
		return math.Float64frombits(v.d.tape[v.i+1]), nil
	case tagNumber:
		t := v.d.numberText(v.i)
		// convertNumber is exact where it answers (eager.go); strconv
		// rounds the rest correctly.
		if tag, bits, ok := convertNumber(t); ok {
			switch tag {
			case tagInt:
				return float64(int64(bits)), nil
			case tagUint:
				return float64(bits), nil
			}
			return math.Float64frombits(bits), nil
		}
		f, err := strconv.ParseFloat(bytesToString(t), 64)
		if err != nil {
			return f, ErrRange // the text was validated, so only range errors remain
		}
		return f, nil
	}
	return 0, ErrWrongKind
}

// parseUint parses validated digits; any '.', 'e' or 'E' means not an integer.
func parseUint(t []byte) (uint64, error) {
	var n uint64
	for _, c := range t {
		d := uint64(c - '0')
		if d > 9 {
			return 0, ErrNotInteger
		}
		if n > (math.MaxUint64-d)/10 {
			if isIntegerText(t) {
				return 0, ErrRange
			}
			return 0, ErrNotInteger
		}
		n = n*10 + d
	}
	return n, nil
}

func isIntegerText(t []byte) bool {
	for _, c := range t {
		if c-'0' > 9 && c != '-' {
			return false
		}
	}
	return true
}

func parseInt(t []byte) (int64, error) {
	if tag, bits, ok := convertNumber(t); ok && tag == tagInt {
		return int64(bits), nil // eight digits at a time
	}
	neg := t[0] == '-'
	digits := t
	if neg {
		digits = t[1:]
	}
	u, err := parseUint(digits)
	if err != nil {
		return 0, err
	}
	if neg {
		if u > 1<<63 {
			return 0, ErrRange
		}
		return -int64(u), nil
	}
	if u > math.MaxInt64 {
		return 0, ErrRange
	}
	return int64(u), nil
}
