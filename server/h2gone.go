package server

// OnStreamGone registers f to run once if the request's HTTP/2 stream
// ends before the handler returns: the client reset it (RST_STREAM: a
// cancelled gRPC call), the server reset it, or the connection is gone. A
// proxy cancels its upstream request with it, so that an upstream stream
// the client gave up on ends at once instead of when the upstream next
// writes (a server-streaming call may wait for an event for hours). f runs
// under the connection's lock on whichever goroutine ended the stream, so
// it must be quick and must not touch the Request or ResponseWriter
// (cancelling a context is the use). A stream already gone runs f at once.
// Over HTTP/1.1 it does nothing and reports false: an HTTP/1.1 client that
// goes away is seen at the next read or write.
func (r *Request) OnStreamGone(f func()) bool {
	s := r.body.h2
	if s == nil {
		if r.body.h3 != nil {
			r.body.h3.onGone(f)
			return true
		}
		return false
	}
	hc := s.hc
	hc.mu.Lock()
	if s.closed || hc.dead {
		// While the handler runs, a stream only closes early: its
		// END_STREAM goes out after the handler returns.
		hc.mu.Unlock()
		f()
		return true
	}
	s.onGone = f
	hc.mu.Unlock()
	return true
}
