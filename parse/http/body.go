package http

// LengthDecoder frames a body of known length (RFC 9112 §6.2) on a
// stream: it counts how many of the bytes that follow the head belong to
// the body. The zero value has nothing left to read.
type LengthDecoder struct {
	remaining int64
}

// Reset starts a body of n bytes (Request.ContentLength).
func (d *LengthDecoder) Reset(n int64) { d.remaining = max(n, 0) }

// Remaining reports how many body bytes are still to come.
func (d *LengthDecoder) Remaining() int64 { return d.remaining }

// Decode takes the body bytes at the start of buf: buf[:n] is body, and
// done reports that the body is complete, in which case buf[n:] belongs to
// the next message. Call it again with the next bytes while done is false.
func (d *LengthDecoder) Decode(buf []byte) (n int, done bool) {
	if int64(len(buf)) >= d.remaining {
		n = int(d.remaining)
	} else {
		n = len(buf)
	}
	d.remaining -= int64(n)
	return n, d.remaining == 0
}
