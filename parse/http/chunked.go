package http

import (
	"math"

	"github.com/simdedge/simdedge/internal/ascii"
)

// Default bounds of a ChunkedDecoder. A chunk line (size and extensions)
// has no length limit in RFC 9112 §7.1, but nothing legitimate needs more
// than a few hundred bytes, and an unbounded line would let a client make
// the server buffer without end.
const (
	DefaultMaxChunkLine    = 4 << 10
	DefaultMaxTrailerBytes = 16 << 10
)

type chunkState uint8

const (
	chunkSize    chunkState = iota // at a chunk-size line
	chunkData                      // inside chunk-data
	chunkDataEnd                   // at the CRLF after chunk-data
	chunkTrailer                   // at a trailer field line or the final CRLF
	chunkDone                      // the message is complete
)

// ChunkedDecoder decodes a chunked body (RFC 9112 §7.1) incrementally and
// in place: it moves chunk data to the front of the caller's buffer and
// keeps only a few integers of state between calls, so a server can feed it
// whatever bytes have arrived. Chunk extensions are checked and skipped;
// trailer fields are checked (as field lines) and skipped, or handed to
// OnTrailer.
//
// The exported fields are its limits; set them before the first Decode
// (zero means the default, MaxBody zero means no limit). Reset starts a
// new body and keeps the limits.
type ChunkedDecoder struct {
	// MaxBody bounds the sum of chunk sizes; beyond it Decode returns
	// ErrBodyTooLarge (413). Zero means no limit.
	MaxBody int64
	// MaxLine bounds a chunk-size line including extensions.
	MaxLine int
	// MaxTrailerBytes bounds the trailer section.
	MaxTrailerBytes int
	// AllowBareLF accepts a lone LF as line terminator, as Options does.
	AllowBareLF bool
	// OnTrailer, if set, is called with each trailer field (RFC 9112
	// §7.1.2) once its line is complete and checked: name and value
	// (without surrounding whitespace) are views into the buffer passed
	// to Decode, valid during the call only. A proxy forwards them; a
	// caller that sets it once keeps it across Reset.
	OnTrailer func(name, value []byte)

	state     chunkState
	remaining int64 // bytes left in the current chunk
	total     int64 // sum of chunk sizes so far
	trailer   int   // trailer bytes so far
}

// Reset prepares d for a new body, keeping its limits.
func (d *ChunkedDecoder) Reset() {
	d.state, d.remaining, d.total, d.trailer = chunkSize, 0, 0, 0
}

// Done reports that the last chunk and the trailer section have been
// decoded.
func (d *ChunkedDecoder) Done() bool { return d.state == chunkDone }

// Decode decodes as much of buf as it can. It moves the chunk data it finds
// to buf[:n] and reports in consumed how many bytes of buf it has dealt
// with (consumed >= n). The caller delivers buf[:n] as body bytes, then
// keeps buf[consumed:] and appends more input to it for the next call:
// those bytes are a line the decoder could not finish yet.
//
// err is nil when the body is complete (buf[consumed:] is then the next
// message), ErrNeedMore when more input is needed (n and consumed are still
// valid), and any other error means the body is malformed or too large.
func (d *ChunkedDecoder) Decode(buf []byte) (n, consumed int, err error) {
	p := 0
	for {
		switch d.state {
		case chunkSize:
			next, size, err := d.sizeLine(buf[p:])
			if err != nil {
				return n, p, err
			}
			p += next
			if size == 0 {
				d.state = chunkTrailer
				continue
			}
			if d.MaxBody > 0 && size > d.MaxBody-d.total {
				return n, p, ErrBodyTooLarge
			}
			d.total += size
			d.remaining = size
			d.state = chunkData
		case chunkData:
			k := len(buf) - p
			if int64(k) > d.remaining {
				k = int(d.remaining)
			}
			if n != p {
				copy(buf[n:], buf[p:p+k])
			}
			n += k
			p += k
			d.remaining -= int64(k)
			if d.remaining > 0 {
				return n, p, ErrNeedMore
			}
			d.state = chunkDataEnd
		case chunkDataEnd:
			// chunk = chunk-size [ chunk-ext ] CRLF chunk-data CRLF
			next, err := d.crlf(buf[p:])
			if err != nil {
				return n, p, err
			}
			p += next
			d.state = chunkSize
		case chunkTrailer:
			next, last, err := d.trailerLine(buf[p:])
			if err != nil {
				return n, p, err
			}
			p += next
			if last {
				d.state = chunkDone
			}
		case chunkDone:
			return n, p, nil
		}
	}
}

func (d *ChunkedDecoder) maxLine() int {
	if d.MaxLine > 0 {
		return d.MaxLine
	}
	return DefaultMaxChunkLine
}

// crlf consumes the line terminator that must start b.
func (d *ChunkedDecoder) crlf(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, ErrNeedMore
	}
	switch b[0] {
	case '\r':
		if len(b) < 2 {
			return 0, ErrNeedMore
		}
		if b[1] == '\n' {
			return 2, nil
		}
	case '\n':
		if d.AllowBareLF {
			return 1, nil
		}
	}
	return 0, ErrMissingChunkCRLF
}

// sizeLine parses chunk-size [ chunk-ext ] CRLF at the start of b and
// returns its length and the size.
//
//	chunk-size = 1*HEXDIG
//	chunk-ext  = *( BWS ";" BWS chunk-ext-name [ BWS "=" BWS chunk-ext-val ] )
//	chunk-ext-val = token / quoted-string
func (d *ChunkedDecoder) sizeLine(b []byte) (int, int64, error) {
	lim := d.maxLine()
	// The line must end within lim bytes. Looking at no more than that
	// makes the verdict independent of how the input was split: a content
	// error inside the window is reported as such, anything that runs past
	// it as ErrChunkLineTooLong (found by FuzzChunked).
	if len(b) > lim {
		b = b[:lim]
	}
	var size int64
	i := 0
	for ; i < len(b) && hexVal[b[i]] != noHex; i++ {
		if size > math.MaxInt64>>4 {
			return 0, 0, ErrChunkSizeOverflow
		}
		size = size<<4 | int64(hexVal[b[i]])
	}
	if i == len(b) {
		if i >= lim {
			return 0, 0, ErrChunkLineTooLong
		}
		return 0, 0, ErrNeedMore
	}
	if i == 0 {
		return 0, 0, ErrInvalidChunkSize
	}
	// Extensions, then the line end.
	sizeEnd := i
	for {
		j := i
		for j < len(b) && ascii.IsOWS(b[j]) {
			j++
		}
		if j == len(b) {
			return 0, 0, d.moreLine(j)
		}
		switch b[j] {
		case ';':
			k, err := chunkExt(b, j+1)
			if err != nil {
				if err == ErrNeedMore {
					err = d.moreLine(len(b))
				}
				return 0, 0, err
			}
			i = k
			continue
		case '\r', '\n':
			if j != i {
				// BWS is only allowed before ";" (a trailing space
				// is how some smuggling payloads hide a size).
				return 0, 0, ErrInvalidChunkSize
			}
			next, err := d.crlf(b[j:])
			if err != nil {
				if err == ErrNeedMore {
					err = d.moreLine(len(b))
				} else if err == ErrMissingChunkCRLF {
					err = ErrBareCR
					if b[j] == '\n' {
						err = ErrBareLF
					}
				}
				return 0, 0, err
			}
			if j+next > lim {
				return 0, 0, ErrChunkLineTooLong
			}
			return j + next, size, nil
		}
		if j == sizeEnd {
			return 0, 0, ErrInvalidChunkSize // e.g. "5x" or "0x5"
		}
		return 0, 0, ErrInvalidChunkExtension
	}
}

// moreLine is ErrNeedMore, or ErrChunkLineTooLong once the unfinished line
// has reached the limit.
func (d *ChunkedDecoder) moreLine(have int) error {
	if have >= d.maxLine() {
		return ErrChunkLineTooLong
	}
	return ErrNeedMore
}

// chunkExt parses BWS chunk-ext-name [ BWS "=" BWS chunk-ext-val ] starting
// at b[i] (just after ";") and returns the offset after it.
func chunkExt(b []byte, i int) (int, error) {
	for i < len(b) && ascii.IsOWS(b[i]) {
		i++
	}
	s := i
	for i < len(b) && tcharSet[b[i]] {
		i++
	}
	if i == len(b) {
		return 0, ErrNeedMore
	}
	if i == s {
		return 0, ErrInvalidChunkExtension
	}
	j := i
	for j < len(b) && ascii.IsOWS(b[j]) {
		j++
	}
	if j == len(b) {
		return 0, ErrNeedMore
	}
	if b[j] != '=' {
		return i, nil
	}
	j++
	for j < len(b) && ascii.IsOWS(b[j]) {
		j++
	}
	if j == len(b) {
		return 0, ErrNeedMore
	}
	if b[j] != '"' {
		s := j
		for j < len(b) && tcharSet[b[j]] {
			j++
		}
		if j == len(b) {
			return 0, ErrNeedMore
		}
		if j == s {
			return 0, ErrInvalidChunkExtension
		}
		return j, nil
	}
	// quoted-string = DQUOTE *( qdtext / quoted-pair ) DQUOTE
	for j++; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			return j + 1, nil
		case c == '\\':
			j++
			if j < len(b) && (isCtl(b[j]) && b[j] != '\t') {
				return 0, ErrInvalidChunkExtension
			}
		case !qdtextSet[c]:
			return 0, ErrInvalidChunkExtension
		}
	}
	return 0, ErrNeedMore
}

// trailerLine parses one line of the trailer section (RFC 9112 §7.1.2):
// a field line, checked like a header field and dropped, or the empty line
// that ends the message (last is true).
func (d *ChunkedDecoder) trailerLine(b []byte) (n int, last bool, err error) {
	lim := d.MaxTrailerBytes
	if lim <= 0 {
		lim = DefaultMaxTrailerBytes
	}
	if len(b) == 0 {
		return 0, false, ErrNeedMore
	}
	if b[0] == '\r' || b[0] == '\n' {
		next, err := d.crlf(b)
		if err == ErrMissingChunkCRLF {
			err = ErrInvalidTrailer
		}
		return next, err == nil, err
	}
	i := 0
	for i < len(b) && tcharSet[b[i]] {
		i++
	}
	if i == len(b) {
		return 0, false, d.moreTrailer(i, lim)
	}
	if i == 0 || b[i] != ':' {
		return 0, false, ErrInvalidTrailer
	}
	c := scalarNextCtl(b, i+1)
	for c < len(b) && b[c] == '\t' {
		c = scalarNextCtl(b, c+1)
	}
	if c == len(b) {
		return 0, false, d.moreTrailer(c, lim)
	}
	next, err := d.crlf(b[c:])
	if err != nil {
		if err == ErrNeedMore {
			return 0, false, d.moreTrailer(len(b), lim)
		}
		return 0, false, ErrInvalidTrailer
	}
	d.trailer += c + next
	if d.trailer > lim {
		return 0, false, ErrTrailerTooLarge
	}
	if d.OnTrailer != nil {
		d.OnTrailer(b[:i], ascii.TrimOWS(b[i+1:c]))
	}
	// A folded continuation line would start with whitespace; it is
	// rejected at the next call (not a tchar, not ':').
	return c + next, false, nil
}

func (d *ChunkedDecoder) moreTrailer(have, lim int) error {
	if d.trailer+have >= lim {
		return ErrTrailerTooLarge
	}
	return ErrNeedMore
}
