package server

// addTrailer is the loop proxy's ChunkedDecoder.OnTrailer: a trailer field
// of the upstream response goes to the client's response, which sends it
// only if the client sent "TE: trailers" (trailers.go; the proxy's
// WriteResponseHead called EnableTrailers). The goroutine proxy has the
// same hook (server/proxy/trailers.go).
func (u *lupconn) addTrailer(name, value []byte) {
	if u.lc != nil && u.lc.c != nil {
		u.lc.c.resp.AddTrailer(name, value)
	}
}
