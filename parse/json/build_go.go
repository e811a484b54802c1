package json

import (
	"bytes"
	"encoding/binary"
	"math/bits"

	"github.com/simdedge/simdedge/asm"
)

// buildGo is the pure-Go engine: one pass over the input that validates it
// (RFC 8259) and writes the tape. Strings stay in the input (unescaped lazily
// by the accessors) and numbers are kept as text offsets (converted lazily),
// so the pass touches each byte once and allocates nothing once the tape and
// stack have grown to the document's size.
//
// It is an explicit-stack state machine (no recursion, so the depth limit is
// a slice length, not goroutine stack). States:
//
//	value  expect a value (RFC 8259 section 3)
//	after  a value ended: ',' or the container's closer, or end of the root
//	key    expect an object member name followed by ':' (section 4)
//
// On error it returns the offending byte offset.
func (d *Document) buildGo(b []byte, nd bool) (errAt int, err error) {
	var cv *strBuf
	if d.opts.Eager {
		d.ubuf.b = d.ubuf.b[:0]
		cv = &d.ubuf
	}
	mk, checkUTF8 := d.marksFor(b)
	if mk != nil && !nd && !d.noIndex {
		// The structural index (index.go) for whole valid texts; on
		// anything else the marks engine below gives the verdict.
		d.index.build(b)
		var ok bool
		if d.own, d.stack, ok = buildIndexed(d.own[:0], d.stack[:0], b, &d.index, d.opts.MaxDepth, cv); ok {
			return 0, nil
		}
		if cv != nil {
			cv.b = cv.b[:0] // what the index stage unescaped before it gave up
		}
	}
	d.own, d.stack, errAt, err = buildTape(d.own[:0], d.stack[:0], b, nd, d.opts.MaxDepth, checkUTF8, mk)
	if err != nil {
		d.own = d.own[:0]
	} else if cv != nil {
		convertTape(d.own, b, cv)
	}
	return errAt, err
}

// buildTape appends the tape of b to tape. It takes and returns the slices
// instead of a closure or a defer over them so that they stay in registers.
//
// mk, when not nil, holds the input's class masks (marks.go) and replaces
// the word loops of the string and whitespace scans.
func buildTape(tape []uint64, stack []int, b []byte, nd bool, maxDepth int, checkUTF8 bool, mk *marks) (_ []uint64, _ []int, errAt int, err error) {
	var (
		i      int
		rootAt int
		end    int
		esc    bool
		top    int
		prev   int
	)

	i = skipWSMarked(b, 0, mk)
	if i >= len(b) {
		if nd {
			return tape, stack, 0, nil
		}
		return tape, stack, i, ErrEmpty
	}
nextRoot:
	rootAt = len(tape)
	tape = append(tape, entry(tagRoot, 0))
value:
	if i >= len(b) {
		return tape, stack, i, ErrUnexpectedEOF
	}
	switch c := b[i]; c {
	case '{':
		if len(stack) >= maxDepth {
			return tape, stack, i, ErrDepth
		}
		stack = append(stack, len(tape)<<stackKindBits|stackObject)
		tape = append(tape, entry(tagObject, 0))
		i = skipWSMarked(b, i+1, mk)
		if i < len(b) && b[i] == '}' {
			tape = closeContainer(tape, stack[len(stack)-1]>>stackKindBits, tagObjEnd)
			stack = stack[:len(stack)-1]
			i++
			goto after
		}
		goto key
	case '[':
		if len(stack) >= maxDepth {
			return tape, stack, i, ErrDepth
		}
		stack = append(stack, len(tape)<<stackKindBits)
		tape = append(tape, entry(tagArray, 0))
		i = skipWSMarked(b, i+1, mk)
		if i < len(b) && b[i] == ']' {
			tape = closeContainer(tape, stack[len(stack)-1]>>stackKindBits, tagArrEnd)
			stack = stack[:len(stack)-1]
			i++
			goto after
		}
		goto value
	case '"':
		if mk != nil {
			end = mk.stopFast(i + 1)
			if end >= 0 && b[end] == '"' {
				esc = false
			} else {
				end, esc, errAt, err = scanStringMarked(b, i+1, mk)
			}
		} else {
			end, esc, errAt, err = scanString(b, i+1, checkUTF8)
		}
		if err != nil {
			return tape, stack, errAt, err
		}
		tape = appendString(tape, i+1, end, esc)
		i = end + 1
	case 't':
		if !hasLiteral(b, i, litTrue) {
			return tape, stack, i, ErrInvalidLiteral
		}
		tape = append(tape, entry(tagTrue, 0))
		i += len(litTrue)
	case 'f':
		if !hasLiteral(b, i, litFalse) {
			return tape, stack, i, ErrInvalidLiteral
		}
		tape = append(tape, entry(tagFalse, 0))
		i += len(litFalse)
	case 'n':
		if !hasLiteral(b, i, litNull) {
			return tape, stack, i, ErrInvalidLiteral
		}
		tape = append(tape, entry(tagNull, 0))
		i += len(litNull)
	default:
		if c != '-' && c-'0' > 9 {
			return tape, stack, i, ErrUnexpectedByte
		}
		end, err = scanNumber(b, i)
		if err != nil {
			return tape, stack, end, err
		}
		tape = append(tape, entry(tagNumber, uint64(i)), uint64(end-i))
		i = end
	}
after:
	prev = i
	i = skipWSMarked(b, i, mk)
	if len(stack) == 0 {
		tape[rootAt] = entry(tagRoot, uint64(len(tape)+1))
		tape = append(tape, entry(tagRoot, uint64(rootAt)))
		if i >= len(b) {
			return tape, stack, 0, nil
		}
		// NDJSON: the next text must start on a later line.
		if nd && bytes.IndexByte(b[prev:i], '\n') >= 0 {
			goto nextRoot
		}
		return tape, stack, i, ErrTrailingData
	}
	if i >= len(b) {
		return tape, stack, i, ErrUnexpectedEOF
	}
	top = stack[len(stack)-1]
	if top&stackObject != 0 {
		switch b[i] {
		case ',':
			i++
			// A line feed and an indentation, in pretty-printed
			// documents: one mask scan, inline (see marks.go).
			if i < len(b) && b[i] > ' ' {
				goto key // compact documents
			}
			if mk != nil && uint(i-mk.base) < uint(mk.end-mk.base) {
				if k := bits.TrailingZeros64(^mk.bits(i, markSpace)); k < asm.BlockSize && i+k < mk.end {
					i += k
					goto key
				}
			}
			i = skipWSMarked(b, i, mk)
			goto key
		case '}':
			tape = closeContainer(tape, top>>stackKindBits, tagObjEnd)
			stack = stack[:len(stack)-1]
			i++
			goto after
		}
		return tape, stack, i, ErrExpectedComma
	}
	switch b[i] {
	case ',':
		i++
		if i < len(b) && b[i] > ' ' {
			goto value
		}
		if mk != nil && uint(i-mk.base) < uint(mk.end-mk.base) { // as for objects
			if k := bits.TrailingZeros64(^mk.bits(i, markSpace)); k < asm.BlockSize && i+k < mk.end {
				i += k
				goto value
			}
		}
		i = skipWSMarked(b, i, mk)
		goto value
	case ']':
		tape = closeContainer(tape, top>>stackKindBits, tagArrEnd)
		stack = stack[:len(stack)-1]
		i++
		goto after
	}
	return tape, stack, i, ErrExpectedComma
key:
	if i >= len(b) {
		return tape, stack, i, ErrUnexpectedEOF
	}
	if b[i] != '"' {
		return tape, stack, i, ErrExpectedKey
	}
	if mk != nil {
		end = mk.stopFast(i + 1)
		if end >= 0 && b[end] == '"' {
			esc = false
		} else {
			end, esc, errAt, err = scanStringMarked(b, i+1, mk)
		}
	} else {
		end, esc, errAt, err = scanString(b, i+1, checkUTF8)
	}
	if err != nil {
		return tape, stack, errAt, err
	}
	tape = appendString(tape, i+1, end, esc)
	i = skipWSMarked(b, end+1, mk)
	if i >= len(b) {
		return tape, stack, i, ErrUnexpectedEOF
	}
	if b[i] != ':' {
		return tape, stack, i, ErrExpectedColon
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

// A stack entry is the opener's tape index shifted left by stackKindBits,
// with stackObject set for objects, so that the loop knows the container
// kind without loading the tape.
const (
	stackKindBits = 1
	stackObject   = 1
)

const (
	litTrue  = "true"
	litFalse = "false"
	litNull  = "null"
)

func hasLiteral(b []byte, i int, lit string) bool {
	return len(b)-i >= len(lit) && string(b[i:i+len(lit)]) == lit
}

func appendString(tape []uint64, start, end int, esc bool) []uint64 {
	p := uint64(start)
	if esc {
		p |= strEscBit
	}
	return append(tape, entry(tagString, p), uint64(end-start))
}

// closeContainer links the opener at tape[open] and its closer both ways.
func closeContainer(tape []uint64, open int, closer byte) []uint64 {
	tape[open] |= uint64(len(tape) + 1)
	return append(tape, entry(closer, uint64(open)))
}

// isSpace is RFC 8259's ws: space, horizontal tab, line feed, carriage return.
var isSpace = func() (t [256]bool) {
	for c := range t {
		t[c] = jsonSpace(byte(c))
	}
	return t
}()

func jsonSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// skipWS returns the index of the first non-whitespace byte at or after i.
// The common case, no whitespace, is inlined; indentation runs (68 % of
// citm_catalog.json is spaces) are skipped a word at a time.
func skipWS(b []byte, i int) int {
	if i < len(b) && b[i] > ' ' {
		return i
	}
	return skipWSSlow(b, i)
}

// skipWSSlow is kept out of line so that skipWS stays small enough to inline.
//
//go:noinline
func skipWSSlow(b []byte, i int) int {
	// Pretty-printed documents: a line feed (or one space) and then an
	// indentation of spaces. The first 16 spaces after that byte are
	// counted without a branch on the indentation's length, which varies
	// from line to line and mispredicted in the word loop below (measured
	// on twitter.json, where this path held a third of the parse time).
	if i+2*wordBytes+2 <= len(b) && (b[i] == '\n' || b[i] == ' ') {
		j := i + 1
		k1 := bits.TrailingZeros64(binary.LittleEndian.Uint64(b[j:])^swarSpace) / byteBits
		k2 := bits.TrailingZeros64(binary.LittleEndian.Uint64(b[j+wordBytes:])^swarSpace) / byteBits
		// k1 is 8 when the first word is all spaces; only then do the
		// second word's spaces continue the run.
		j += k1 + k2&-(k1>>3)
		if b[j] > ' ' {
			return j
		}
		i = j
	}
	for i+wordBytes <= len(b) {
		x := binary.LittleEndian.Uint64(b[i:]) ^ swarSpace
		if x == 0 {
			i += wordBytes
			continue
		}
		i += bits.TrailingZeros64(x) / byteBits // first byte that is not ' '
		if c := b[i]; c != '\n' && c != '\r' && c != '\t' {
			return i
		}
		i++
	}
	for i < len(b) && isSpace[b[i]] {
		i++
	}
	return i
}
