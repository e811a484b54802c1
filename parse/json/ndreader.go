package json

import (
	"bytes"
	"errors"
	"io"
)

// ErrLineTooLong is returned by NDReader for a line longer than its limit.
var ErrLineTooLong = errors.New("json: ndjson line exceeds the size limit")

// DefaultMaxLine is NDReader's default line limit.
const DefaultMaxLine = 1 << 20

// ndMinRead is the smallest free space NDReader reads into at once.
const ndMinRead = 4096

// NDReader streams NDJSON from an io.Reader: each call to Next parses the
// next non-blank line as one JSON text. Its buffer is reused, so steady
// state allocates nothing. The Document returned by Next is valid until the
// next call. Error offsets count bytes from the start of the stream.
type NDReader struct {
	r          io.Reader
	p          *Parser
	buf        []byte
	start, end int   // unread data is buf[start:end]
	consumed   int64 // stream offset of buf[0]
	maxLine    int
	rerr       error
}

// NewNDReader returns a reader of r that parses with p. maxLine bounds a
// line (0: DefaultMaxLine); longer lines give ErrLineTooLong.
func NewNDReader(r io.Reader, p *Parser, maxLine int) *NDReader {
	if maxLine <= 0 {
		maxLine = DefaultMaxLine
	}
	return &NDReader{r: r, p: p, maxLine: maxLine}
}

// Next parses the next non-blank line. At the end of the stream it returns
// io.EOF; a read error is returned as is.
func (nr *NDReader) Next() (*Document, error) {
	for {
		line, lineStart, ok, err := nr.nextLine()
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, io.EOF
		}
		if skipWS(line, 0) == len(line) {
			continue
		}
		doc, err := nr.p.parse(line, false, opParseND)
		if err != nil {
			var e *Error
			if errors.As(err, &e) {
				e.Offset += int(lineStart)
			}
			return nil, err
		}
		return doc, nil
	}
}

// nextLine returns the next line without its '\n' and its stream offset.
func (nr *NDReader) nextLine() (line []byte, at int64, ok bool, err error) {
	for {
		if k := bytes.IndexByte(nr.buf[nr.start:nr.end], '\n'); k >= 0 {
			line = nr.buf[nr.start : nr.start+k]
			at = nr.consumed + int64(nr.start)
			nr.start += k + 1
			if k > nr.maxLine {
				return nil, 0, false, &Error{Op: opParseND, Offset: int(at), Err: ErrLineTooLong}
			}
			return line, at, true, nil
		}
		if nr.end-nr.start > nr.maxLine {
			return nil, 0, false, &Error{Op: opParseND, Offset: int(nr.consumed) + nr.start, Err: ErrLineTooLong}
		}
		if nr.rerr != nil {
			if nr.start == nr.end {
				if nr.rerr == io.EOF {
					return nil, 0, false, nil
				}
				return nil, 0, false, nr.rerr
			}
			// The last line has no '\n'.
			line = nr.buf[nr.start:nr.end]
			at = nr.consumed + int64(nr.start)
			nr.start = nr.end
			return line, at, true, nil
		}
		nr.fill()
	}
}

// fill moves the unread data to the front and reads more.
func (nr *NDReader) fill() {
	if nr.start > 0 {
		n := copy(nr.buf, nr.buf[nr.start:nr.end])
		nr.consumed += int64(nr.start)
		nr.start, nr.end = 0, n
	}
	if len(nr.buf)-nr.end < ndMinRead {
		grown := make([]byte, max(2*len(nr.buf), nr.end+ndMinRead))
		copy(grown, nr.buf[:nr.end])
		nr.buf = grown
	}
	n, err := nr.r.Read(nr.buf[nr.end:])
	nr.end += n
	if err != nil {
		nr.rerr = err
	}
}
