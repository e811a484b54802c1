package json

// validate runs the state machine of buildTape (see
// build_go.go for the states and RFC sections) without writing a tape; the
// stack only records whether each open container is an object. It exists
// so that Validate does not pay for tape writes, and it must accept and
// reject exactly what buildTape does (TestValidateAgrees, FuzzParse).
func validate(kinds []bool, b []byte, maxDepth int, checkUTF8 bool, mk *marks) (_ []bool, errAt int, err error) {
	var (
		i   int
		end int
	)
	i = skipWSMarked(b, 0, mk)
	if i >= len(b) {
		return kinds, i, ErrEmpty
	}
value:
	if i >= len(b) {
		return kinds, i, ErrUnexpectedEOF
	}
	switch c := b[i]; c {
	case '{', '[':
		if len(kinds) >= maxDepth {
			return kinds, i, ErrDepth
		}
		kinds = append(kinds, c == '{')
		i = skipWSMarked(b, i+1, mk)
		if i < len(b) && b[i] == c+closerDelta {
			kinds = kinds[:len(kinds)-1]
			i++
			goto after
		}
		if c == '{' {
			goto key
		}
		goto value
	case '"':
		if mk != nil {
			end, _, errAt, err = scanStringMarked(b, i+1, mk)
		} else {
			end, _, errAt, err = scanString(b, i+1, checkUTF8)
		}
		if err != nil {
			return kinds, errAt, err
		}
		i = end + 1
	case 't':
		if !hasLiteral(b, i, litTrue) {
			return kinds, i, ErrInvalidLiteral
		}
		i += len(litTrue)
	case 'f':
		if !hasLiteral(b, i, litFalse) {
			return kinds, i, ErrInvalidLiteral
		}
		i += len(litFalse)
	case 'n':
		if !hasLiteral(b, i, litNull) {
			return kinds, i, ErrInvalidLiteral
		}
		i += len(litNull)
	default:
		if c != '-' && c-'0' > 9 {
			return kinds, i, ErrUnexpectedByte
		}
		end, err = scanNumber(b, i)
		if err != nil {
			return kinds, end, err
		}
		i = end
	}
after:
	i = skipWSMarked(b, i, mk)
	if len(kinds) == 0 {
		if i >= len(b) {
			return kinds, 0, nil
		}
		return kinds, i, ErrTrailingData
	}
	if i >= len(b) {
		return kinds, i, ErrUnexpectedEOF
	}
	if kinds[len(kinds)-1] {
		switch b[i] {
		case ',':
			i = skipWSMarked(b, i+1, mk)
			goto key
		case '}':
			kinds = kinds[:len(kinds)-1]
			i++
			goto after
		}
		return kinds, i, ErrExpectedComma
	}
	switch b[i] {
	case ',':
		i = skipWSMarked(b, i+1, mk)
		goto value
	case ']':
		kinds = kinds[:len(kinds)-1]
		i++
		goto after
	}
	return kinds, i, ErrExpectedComma
key:
	if i >= len(b) {
		return kinds, i, ErrUnexpectedEOF
	}
	if b[i] != '"' {
		return kinds, i, ErrExpectedKey
	}
	if mk != nil {
		end, _, errAt, err = scanStringMarked(b, i+1, mk)
	} else {
		end, _, errAt, err = scanString(b, i+1, checkUTF8)
	}
	if err != nil {
		return kinds, errAt, err
	}
	i = skipWSMarked(b, end+1, mk)
	if i >= len(b) {
		return kinds, i, ErrUnexpectedEOF
	}
	if b[i] != ':' {
		return kinds, i, ErrExpectedColon
	}
	// "name": value puts exactly one space after the colon (16,581 of
	// twitter.json's 32,073 whitespace runs): skipped here, inline.
	if i+2 < len(b) && b[i+1] == ' ' && b[i+2] > ' ' {
		i += 2
	} else {
		i = skipWSMarked(b, i+1, mk)
	}
	goto value
}

// closerDelta maps '[' to ']' and '{' to '}' (both pairs are two apart in ASCII).
const closerDelta = ']' - '['
