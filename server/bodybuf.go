package server

// Memory for a body gathered whole (Request.BodyBytes) and for a small body
// the event loop waits for: both grow with the bytes that arrive, never
// with the length a client announces. A Content-Length is only a claim: 300
// connections each announcing 10 MB and then sending nothing made the old
// up-front allocation hold gigabytes (issue 18).

// bodyBufMin is the first buffer a gathered body gets when it is not
// already whole in the read buffer: it holds a typical form or JSON post
// in one allocation, and is small against the per-connection bound
// (64 KiB beyond the bytes received).
const bodyBufMin = 16 << 10

// growBody returns buf (len unchanged) with room for at least one more
// byte: at least bodyBufMin, then doubling, so the buffer is never more
// than twice the bytes it holds (plus bodyBufMin). limit, when positive,
// caps the new capacity: the announced length, which the buffer never
// needs to exceed.
func growBody(buf []byte, limit int) []byte {
	n := max(2*cap(buf), bodyBufMin)
	if limit > 0 && n > limit {
		n = max(limit, len(buf)+1)
	}
	nb := make([]byte, len(buf), n)
	copy(nb, buf)
	return nb
}

// nextBodyRoom is the read-buffer size the event loop grows to while it
// waits for a body of need bytes (head included) from rbuf[0:]: double the
// current size, capped at need, so a connection holds at most about twice
// what it has received.
func nextBodyRoom(cur, need int) int {
	return min(2*cur, need)
}
