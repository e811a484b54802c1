package json

import "encoding/binary"

// keyEnd is a key's closing quote and the ':' right after it, as a
// little-endian 16-bit word.
const keyEnd = '"' | ':'<<8

// buildIndexed is the second stage over the structural index (index.go):
// buildTape's state machine for one JSON text, but each token's position
// comes from x.pos instead of from scanning past the token before. It
// writes the same tape as buildTape and reports ok; on anything that is not
// part of a valid document (an error, a depth beyond maxDepth, trailing
// data) it stops and reports !ok, and the caller runs buildTape, which
// gives the verdict and the error offset. So it needs no error paths of
// its own, and accepts only what buildTape accepts.
//
// Between two structural positions the index guarantees whitespace only,
// except after a number or literal, where the run of non-whitespace bytes
// goes on without a new position ("12x", "truex"): so a scalar must end at
// the next position or at whitespace. A string's closing quote is found by
// its scan (the stop masks in x.mk), and the next position must lie beyond
// it.
//
// With cv (Options.Eager), it converts each number and unescapes each
// string with escapes into cv as it writes them (eager.go), while their
// bytes are in cache, instead of a pass over the tape afterwards.
func buildIndexed(tape []uint64, stack []int, b []byte, x *index, maxDepth int, cv *strBuf) (_ []uint64, _ []int, ok bool) {
	var (
		pos = x.pos
		mk  = &x.mk
		n   int // next entry of pos
		i   int
		end int
		esc bool
		// obj says the innermost open container is an object, kept
		// beside the stack so that each value's end does not load it.
		obj bool
		err error
	)
	i, n = int(pos[0]), 1
	if i >= len(b) {
		return tape, stack, false // empty: buildTape reports it
	}
	tape = append(tape, entry(tagRoot, 0))
value:
	switch c := b[i]; c {
	case '{':
		if len(stack) >= maxDepth {
			return tape, stack, false
		}
		stack = append(stack, len(tape)<<stackKindBits|stackObject)
		obj = true
		tape = append(tape, entry(tagObject, 0))
		i, n = int(pos[n]), n+1
		if i >= len(b) {
			return tape, stack, false
		}
		if b[i] == '}' {
			tape = closeContainer(tape, stack[len(stack)-1]>>stackKindBits, tagObjEnd)
			stack = stack[:len(stack)-1]
			obj = inObject(stack)
			goto after
		}
		goto key
	case '[':
		if len(stack) >= maxDepth {
			return tape, stack, false
		}
		stack = append(stack, len(tape)<<stackKindBits)
		obj = false
		tape = append(tape, entry(tagArray, 0))
		i, n = int(pos[n]), n+1
		if i >= len(b) {
			return tape, stack, false
		}
		if b[i] == ']' {
			tape = closeContainer(tape, stack[len(stack)-1]>>stackKindBits, tagArrEnd)
			stack = stack[:len(stack)-1]
			obj = inObject(stack)
			goto after
		}
		goto value
	case '"':
		// A plain string right before the next structural ends at the
		// byte before it (index.plain); at the end of the input the
		// index proves nothing (an unterminated string), so it is scanned.
		if end = int(pos[n]) - 1; int(pos[n]) < len(b) && b[end] == '"' && x.plain(i, end) {
			esc = false
		} else if end = mk.stopFast(i + 1); end >= 0 && b[end] == '"' {
			esc = false
		} else if end, esc, _, err = scanStringMarked(b, i+1, mk); err != nil {
			return tape, stack, false
		}
		if int(pos[n]) <= end {
			return tape, stack, false
		}
		if esc && cv != nil {
			tape = cv.appendString(tape, b[i+1:end])
		} else {
			tape = appendString(tape, i+1, end, esc)
		}
		goto after
	case 't':
		if !hasLiteral(b, i, litTrue) {
			return tape, stack, false
		}
		tape = append(tape, entry(tagTrue, 0))
		end = i + len(litTrue)
	case 'f':
		if !hasLiteral(b, i, litFalse) {
			return tape, stack, false
		}
		tape = append(tape, entry(tagFalse, 0))
		end = i + len(litFalse)
	case 'n':
		if !hasLiteral(b, i, litNull) {
			return tape, stack, false
		}
		tape = append(tape, entry(tagNull, 0))
		end = i + len(litNull)
	default:
		if c != '-' && c-'0' > 9 {
			return tape, stack, false
		}
		if end, err = scanNumber(b, i); err != nil {
			return tape, stack, false
		}
		var (
			tag  byte
			bits uint64
			conv bool
		)
		if cv != nil {
			tag, bits, conv = convertNumber(b[i:end])
		}
		if conv {
			tape = append(tape, entry(tag, 0), bits)
		} else {
			tape = append(tape, entry(tagNumber, uint64(i)), uint64(end-i))
		}
	}
	// A number or literal ends at the next position or at whitespace.
	if int(pos[n]) != end && (end >= len(b) || !isSpace[b[end]]) {
		return tape, stack, false
	}
after:
	if len(stack) == 0 {
		if int(pos[n]) != len(b) {
			return tape, stack, false // trailing data
		}
		tape[0] = entry(tagRoot, uint64(len(tape)+1))
		return append(tape, entry(tagRoot, 0)), stack, true
	}
	i, n = int(pos[n]), n+1
	if i >= len(b) {
		return tape, stack, false
	}
	if obj {
		switch b[i] {
		case ',':
			i, n = int(pos[n]), n+1
			if i >= len(b) {
				return tape, stack, false
			}
			goto key
		case '}':
			tape = closeContainer(tape, stack[len(stack)-1]>>stackKindBits, tagObjEnd)
			stack = stack[:len(stack)-1]
			obj = inObject(stack)
			goto after
		}
		return tape, stack, false
	}
	switch b[i] {
	case ',':
		i, n = int(pos[n]), n+1
		if i >= len(b) {
			return tape, stack, false
		}
		goto value
	case ']':
		tape = closeContainer(tape, stack[len(stack)-1]>>stackKindBits, tagArrEnd)
		stack = stack[:len(stack)-1]
		obj = inObject(stack)
		goto after
	}
	return tape, stack, false
key:
	if b[i] != '"' {
		return tape, stack, false
	}
	// "name": as for value strings; the ':' checked below is the next
	// position, so an unterminated key fails there. Most keys are plain
	// and followed at once by the ':' that is the next position: one
	// 16-bit load checks the closing quote and the ':'.
	if end = int(pos[n]) - 1; end+1 < len(b) && binary.LittleEndian.Uint16(b[end:]) == keyEnd && x.plain(i, end) {
		tape = appendString(tape, i+1, end, false)
		i, n = int(pos[n+1]), n+2
		if i >= len(b) {
			return tape, stack, false
		}
		goto value
	}
	if end = int(pos[n]) - 1; b[end] == '"' && x.plain(i, end) {
		esc = false
	} else if end = mk.stopFast(i + 1); end >= 0 && b[end] == '"' {
		esc = false
	} else if end, esc, _, err = scanStringMarked(b, i+1, mk); err != nil {
		return tape, stack, false
	}
	if esc && cv != nil {
		tape = cv.appendString(tape, b[i+1:end])
	} else {
		tape = appendString(tape, i+1, end, esc)
	}
	i, n = int(pos[n]), n+1
	if i <= end || i >= len(b) || b[i] != ':' {
		return tape, stack, false
	}
	i, n = int(pos[n]), n+1
	if i >= len(b) {
		return tape, stack, false
	}
	goto value
}

// inObject reports whether the innermost container on stack is an object.
func inObject(stack []int) bool {
	return len(stack) > 0 && stack[len(stack)-1]&stackObject != 0
}
