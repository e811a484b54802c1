package http

import (
	"errors"
	"strings"
	"testing"
)

// decodeAll feeds in to a ChunkedDecoder split at the given step (0: all at
// once), the way a server's read loop would: keep the unconsumed bytes,
// append new input, decode again. It returns the body and the bytes after
// the message.
func decodeAll(d *ChunkedDecoder, in string, step int) (body, rest string, err error) {
	if step <= 0 {
		step = len(in) + 1
	}
	var pending []byte
	var out []byte
	for off := 0; ; {
		end := min(off+step, len(in))
		pending = append(pending, in[off:end]...)
		off = end
		n, consumed, err := d.Decode(pending)
		out = append(out, pending[:n]...)
		pending = append(pending[:0], pending[consumed:]...)
		switch {
		case err == nil:
			return string(out), string(pending) + in[off:], nil
		case !errors.Is(err, ErrNeedMore):
			return string(out), "", err
		case off == len(in):
			return string(out), "", err
		}
	}
}

func TestChunked(t *testing.T) {
	cases := []struct {
		name string
		in   string
		body string
		err  error
		dec  ChunkedDecoder
	}{
		{"simple", "b\r\nhello world\r\n0\r\n\r\n", "hello world", nil, ChunkedDecoder{}},
		{"two chunks upper hex", "5\r\nhello\r\nA\r\n0123456789\r\n0\r\n\r\n", "hello0123456789", nil, ChunkedDecoder{}},
		{"leading zeros", "0005\r\nhello\r\n000\r\n\r\n", "hello", nil, ChunkedDecoder{}},
		{"extensions", "5;a=b;c;d=\"x;y\\\"z\" ; e = f\r\nhello\r\n0;last\r\n\r\n", "hello", nil, ChunkedDecoder{}},
		{"trailers", "5\r\nhello\r\n0\r\nX-Sum: 1\r\nX-B: \tc\r\n\r\n", "hello", nil, ChunkedDecoder{}},
		{"empty body", "0\r\n\r\n", "", nil, ChunkedDecoder{}},
		{"bare lf lenient", "5\nhello\n0\n\n", "hello", nil, ChunkedDecoder{AllowBareLF: true}},

		{"invalid hex", "5g\r\nhello\r\n0\r\n\r\n", "", ErrInvalidChunkSize, ChunkedDecoder{}},
		{"empty size", "\r\nhello\r\n0\r\n\r\n", "", ErrInvalidChunkSize, ChunkedDecoder{}},
		{"0x prefix", "0x5\r\nhello\r\n0\r\n\r\n", "", ErrInvalidChunkSize, ChunkedDecoder{}},
		{"negative", "-5\r\nhello\r\n0\r\n\r\n", "", ErrInvalidChunkSize, ChunkedDecoder{}},
		{"space after size", "5 \r\nhello\r\n0\r\n\r\n", "", ErrInvalidChunkSize, ChunkedDecoder{}},
		{"overflow", "10000000000000000\r\n", "", ErrChunkSizeOverflow, ChunkedDecoder{}},
		{"overflow max+1", "8000000000000000\r\n", "", ErrChunkSizeOverflow, ChunkedDecoder{}},
		{"missing crlf after data", "5\r\nhelloX\r\n0\r\n\r\n", "hello", ErrMissingChunkCRLF, ChunkedDecoder{}},
		{"cr without lf after data", "5\r\nhello\rX0\r\n\r\n", "hello", ErrMissingChunkCRLF, ChunkedDecoder{}},
		{"bare lf after data", "5\r\nhello\n0\r\n\r\n", "hello", ErrMissingChunkCRLF, ChunkedDecoder{}},
		{"bare lf after size", "5\nhello\r\n0\r\n\r\n", "", ErrBareLF, ChunkedDecoder{}},
		{"bare cr after size", "5\rhello\r\n0\r\n\r\n", "", ErrBareCR, ChunkedDecoder{}},
		{"bad extension name", "5;=b\r\nhello\r\n0\r\n\r\n", "", ErrInvalidChunkExtension, ChunkedDecoder{}},
		{"bad extension value", "5;a=\r\nhello\r\n0\r\n\r\n", "", ErrInvalidChunkExtension, ChunkedDecoder{}},
		{"unterminated quote", "5;a=\"b\r\nhello\r\n0\r\n\r\n", "", ErrInvalidChunkExtension, ChunkedDecoder{}},
		{"ctl in extension", "5;a\x01\r\nhello\r\n0\r\n\r\n", "", ErrInvalidChunkExtension, ChunkedDecoder{}},
		{"bad trailer", "0\r\nX Y: z\r\n\r\n", "", ErrInvalidTrailer, ChunkedDecoder{}},
		{"folded trailer", "0\r\nX: y\r\n z\r\n\r\n", "", ErrInvalidTrailer, ChunkedDecoder{}},
		{"ctl in trailer", "0\r\nX: y\x00\r\n\r\n", "", ErrInvalidTrailer, ChunkedDecoder{}},
		{"body limit", "5\r\nhello\r\n6\r\nworld!\r\n0\r\n\r\n", "hello", ErrBodyTooLarge, ChunkedDecoder{MaxBody: 10}},
		{"line limit", "5;" + strings.Repeat("a", 100) + "\r\nhello\r\n0\r\n\r\n", "", ErrChunkLineTooLong, ChunkedDecoder{MaxLine: 64}},
		{"trailer limit", "0\r\nX: " + strings.Repeat("a", 100) + "\r\n\r\n", "", ErrTrailerTooLarge, ChunkedDecoder{MaxTrailerBytes: 64}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, step := range []int{0, 1, 2, 3, 7} {
				d := c.dec
				in := c.in
				if c.err == nil {
					in += "NEXT"
				}
				body, rest, err := decodeAll(&d, in, step)
				if !errors.Is(err, c.err) || (c.err == nil) != (err == nil) {
					t.Fatalf("step %d: err = %v, want %v", step, err, c.err)
				}
				if c.err != nil {
					assertNoInput(t, err, in)
					if StatusFor(err) == 0 {
						t.Errorf("StatusFor(%v) = 0", err)
					}
					continue
				}
				if body != c.body || rest != "NEXT" {
					t.Fatalf("step %d: body %q rest %q, want %q and NEXT", step, body, rest, c.body)
				}
				if !d.Done() {
					t.Errorf("step %d: not done", step)
				}
			}
		})
	}
	if s := StatusFor(ErrBodyTooLarge); s != 413 {
		t.Errorf("StatusFor(ErrBodyTooLarge) = %d", s)
	}
}

// TestChunkedPrefix checks that a truncated body only ever needs more.
func TestChunkedPrefix(t *testing.T) {
	in := "5;a=\"q\"\r\nhello\r\n1a\r\nabcdefghijklmnopqrstuvwxyz\r\n0\r\nT: v\r\n\r\n"
	for i := 0; i < len(in); i++ {
		var d ChunkedDecoder
		_, _, err := decodeAll(&d, in[:i], 0)
		if !errors.Is(err, ErrNeedMore) {
			t.Fatalf("prefix %q: err = %v", in[:i], err)
		}
	}
}

func TestLengthDecoder(t *testing.T) {
	var d LengthDecoder
	d.Reset(10)
	n, done := d.Decode([]byte("0123"))
	if n != 4 || done || d.Remaining() != 6 {
		t.Fatalf("n=%d done=%v rem=%d", n, done, d.Remaining())
	}
	n, done = d.Decode([]byte("456789NEXT"))
	if n != 6 || !done || d.Remaining() != 0 {
		t.Fatalf("n=%d done=%v rem=%d", n, done, d.Remaining())
	}
	d.Reset(0)
	if n, done := d.Decode([]byte("x")); n != 0 || !done {
		t.Fatalf("empty body: n=%d done=%v", n, done)
	}
}
