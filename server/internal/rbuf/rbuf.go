// Package rbuf holds the read-buffer step that the proxy's goroutine path
// and its event-loop path share.
package rbuf

// Compact moves the unread bytes buf[r:w] to the front and, when they fill
// the buffer, doubles it, so that the next read has room. It returns the
// buffer and the new write offset; the read offset is then 0. Callers bound
// how often a buffer can fill without being consumed (a response head is
// bounded by the parser, a chunk line by the chunk decoder), so the growth
// is bounded too.
func Compact(buf []byte, r, w int) ([]byte, int) {
	if r > 0 {
		w = copy(buf, buf[r:w])
	}
	if w == len(buf) {
		nb := make([]byte, 2*len(buf))
		copy(nb, buf[:w])
		buf = nb
	}
	return buf, w
}
