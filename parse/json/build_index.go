package json

import "slices"

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
	// Reserve the tape and the stack for the whole document, so that the
	// loop appends without growslice: a call on any path makes Go's
	// register allocator keep the loop's state (tape, stack, pos, n, i)
	// on the stack. Each position gives at most two tape entries, and
	// the depth is at most the number of positions.
	tape = slices.Grow(tape, 2*len(pos)+2)
	stack = slices.Grow(stack, min(maxDepth, len(pos))+1)
	tape = put1(tape, entry(tagRoot, 0))
value:
	switch c := b[i]; c {
	case '{':
		if len(stack) >= maxDepth {
			return tape, stack, false
		}
		stack = stack[:len(stack)+1]
		stack[len(stack)-1] = len(tape)<<stackKindBits | stackObject
		obj = true
		tape = put1(tape, entry(tagObject, 0))
		i, n = int(pos[n]), n+1
		if i >= len(b) {
			return tape, stack, false
		}
		if b[i] == '}' {
			tape = closeIn(tape, stack[len(stack)-1]>>stackKindBits, tagObjEnd)
			stack = stack[:len(stack)-1]
			obj = inObject(stack)
			goto after
		}
		goto key
	case '[':
		if len(stack) >= maxDepth {
			return tape, stack, false
		}
		stack = stack[:len(stack)+1]
		stack[len(stack)-1] = len(tape) << stackKindBits
		obj = false
		tape = put1(tape, entry(tagArray, 0))
		i, n = int(pos[n]), n+1
		if i >= len(b) {
			return tape, stack, false
		}
		if b[i] == ']' {
			tape = closeIn(tape, stack[len(stack)-1]>>stackKindBits, tagArrEnd)
			stack = stack[:len(stack)-1]
			obj = inObject(stack)
			goto after
		}
		goto value
	case '"':
		// A plain string right before the next structural ends at the
		// byte before it (index.plainEnd).
		if end = int(pos[n]) - 1; x.plainEnd(end) {
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
			tape = put2(tape, strEntry(i+1, esc), uint64(end-i-1))
		}
		goto after
	case 't':
		if !hasLiteral(b, i, litTrue) {
			return tape, stack, false
		}
		tape = put1(tape, entry(tagTrue, 0))
		end = i + len(litTrue)
	case 'f':
		if !hasLiteral(b, i, litFalse) {
			return tape, stack, false
		}
		tape = put1(tape, entry(tagFalse, 0))
		end = i + len(litFalse)
	case 'n':
		if !hasLiteral(b, i, litNull) {
			return tape, stack, false
		}
		tape = put1(tape, entry(tagNull, 0))
		end = i + len(litNull)
	default:
		if cv != nil && c-'0' <= 9 {
			// Inline, without the calls of the general path below: a
			// non-negative integer of at most shortInt digits, most of
			// twitter.json's numbers (1845 of 2109 have one to three),
			// scanned and converted. Anything else ("01", longer, a
			// fraction, an exponent) takes the general path. Only for
			// cv: without it, the general path measured as fast.
			j, m := i+1, uint64(c-'0')
			for c != '0' && j < len(b) && j-i < shortInt && b[j]-'0' <= 9 {
				m = m*10 + uint64(b[j]-'0')
				j++
			}
			if j >= len(b) || b[j]-'0' > 9 && b[j] != '.' && b[j]|0x20 != 'e' {
				end = j
				tape = put2(tape, entry(tagInt, 0), m)
				break
			}
		}
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
			tape = put2(tape, entry(tag, 0), bits)
		} else {
			tape = put2(tape, entry(tagNumber, uint64(i)), uint64(end-i))
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
		return put1(tape, entry(tagRoot, 0)), stack, true
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
			tape = closeIn(tape, stack[len(stack)-1]>>stackKindBits, tagObjEnd)
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
		tape = closeIn(tape, stack[len(stack)-1]>>stackKindBits, tagArrEnd)
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
	// and followed at once by the ':' that is the next position.
	if end = int(pos[n]) - 1; x.plainEnd(end) && end+1 < len(b) && b[end+1] == ':' {
		tape = put2(tape, strEntry(i+1, false), uint64(end-i-1))
		i, n = int(pos[n+1]), n+2
		if i >= len(b) {
			return tape, stack, false
		}
		goto value
	}
	if end = int(pos[n]) - 1; x.plainEnd(end) {
		esc = false
	} else if end = mk.stopFast(i + 1); end >= 0 && b[end] == '"' {
		esc = false
	} else if end, esc, _, err = scanStringMarked(b, i+1, mk); err != nil {
		return tape, stack, false
	}
	if esc && cv != nil {
		tape = cv.appendString(tape, b[i+1:end])
	} else {
		tape = put2(tape, strEntry(i+1, esc), uint64(end-i-1))
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

// shortInt is the most digits of the integers buildIndexed scans inline.
const shortInt = 4

// inObject reports whether the innermost container on stack is an object.
func inObject(stack []int) bool {
	return len(stack) > 0 && stack[len(stack)-1]&stackObject != 0
}

// put1 and put2 append within the capacity buildIndexed reserved: a
// reslice and stores, no call.
func put1(t []uint64, a uint64) []uint64 {
	t = t[:len(t)+1]
	t[len(t)-1] = a
	return t
}

func put2(t []uint64, a, b uint64) []uint64 {
	t = t[:len(t)+2]
	t[len(t)-2], t[len(t)-1] = a, b
	return t
}

// strEntry is appendString's first entry.
func strEntry(start int, esc bool) uint64 {
	p := uint64(start)
	if esc {
		p |= strEscBit
	}
	return entry(tagString, p)
}

// closeIn is closeContainer within reserved capacity.
func closeIn(tape []uint64, open int, closer byte) []uint64 {
	tape[open] |= uint64(len(tape) + 1)
	return put1(tape, entry(closer, uint64(open)))
}
