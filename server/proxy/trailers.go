package proxy

// addTrailer hands a trailer field of the chunked response being relayed
// to its client response, which sends it only if the client sent
// "TE: trailers" (server.ResponseWriter.EnableTrailers, called by
// writeResponseHead). Both proxy paths do this: the loop's lupconn has
// the same hook (server/looptrailer_linux.go).
func (c *upConn) addTrailer(name, value []byte) {
	if c.tw != nil {
		c.tw.AddTrailer(name, value)
	}
}
