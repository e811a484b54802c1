package json

import (
	"errors"
	"strconv"
)

// Sentinel errors. They never contain input bytes; the position of a syntax
// error is carried by *Error.
var (
	ErrUnexpectedEOF  = errors.New("json: unexpected end of input")
	ErrUnexpectedByte = errors.New("json: unexpected byte")
	ErrTrailingData   = errors.New("json: data after the top-level value")
	ErrDepth          = errors.New("json: nesting exceeds the depth limit")
	ErrTooLarge       = errors.New("json: input exceeds the size limit")
	ErrControlChar    = errors.New("json: control character in string")
	ErrInvalidEscape  = errors.New("json: invalid escape sequence")
	ErrLoneSurrogate  = errors.New("json: unpaired surrogate in \\u escape")
	ErrInvalidUTF8    = errors.New("json: invalid UTF-8")
	ErrInvalidNumber  = errors.New("json: invalid number")
	ErrInvalidLiteral = errors.New("json: invalid literal")
	ErrExpectedColon  = errors.New("json: expected ':' after object key")
	ErrExpectedKey    = errors.New("json: expected string object key")
	ErrExpectedComma  = errors.New("json: expected ',' or closing bracket")
	ErrEmpty          = errors.New("json: empty input")
	ErrWrongKind      = errors.New("json: value has a different kind")
	ErrNotFound       = errors.New("json: path not found")
	ErrRange          = errors.New("json: number out of range")
	ErrBadPath        = errors.New("json: path element must be a string or an int")
)

// Error reports a syntax error at a byte offset of the input. The input bytes
// are never copied into the error, so it is safe to log.
type Error struct {
	Op     string // "parse", "parse-nd", "validate"
	Offset int    // byte offset of the offending byte (len(input) for EOF)
	Err    error  // one of the sentinel errors
}

func (e *Error) Error() string {
	return "json: " + e.Op + ": " + trimPrefix(e.Err.Error()) + " at offset " + strconv.Itoa(e.Offset)
}

// Unwrap returns the sentinel.
func (e *Error) Unwrap() error { return e.Err }

func trimPrefix(s string) string {
	const p = "json: "
	if len(s) >= len(p) && s[:len(p)] == p {
		return s[len(p):]
	}
	return s
}
