package server

// InlineMessageListener is a MessageListener whose transport can have a
// message served on the goroutine that received it — an RDMA connection's
// completion poller, say — instead of queueing it for Receive and a
// goroutine of the server core: no goroutine hand-off, no wake-up of an
// idle thread per request.
//
// ServeMessages calls SetInline with a serve function before its first
// Receive when the server's Handler implements Router or Inliner, and
// SetInline(nil) before it returns. While one is set, the transport offers
// every received message to serve first, on its receiving goroutine. serve
// returns true when it took the message: it ran the request's plan inline
// (plan.go: its steps need no goroutine and its action is an Inliner), or
// answered an error for a malformed request, replied and released it, as
// ServeMessages would have. It returns false when the message needs a
// goroutine (the plan cannot run inline, a chunked body, the server
// shutting down): the message is untouched — not released, its bytes
// unchanged — and the transport queues it for Receive as usual. (The
// goroutine then looks its route up again, since the plan does not travel
// with a queued message; the decline is decided before the route's gate
// admits the message, so the admission is taken once, there.)
//
// An inline handler never blocks (see Inliner), but the replies it makes
// run on the receiving goroutine: the transport's Reply must not wait for
// anything that only that goroutine delivers (credits or acknowledgements
// read from its own queue). A transport that cannot send a reply at once
// copies it and sends it from another goroutine.
//
// Inline messages do not count against Limits.MaxConns: they are bounded
// by the transport's receiving goroutines, one message at a time each.
type InlineMessageListener interface {
	MessageListener
	SetInline(serve func(Message) bool)
}

// inlines reports whether the server's handler may serve some requests
// without blocking: a Router (its plans say which) or an Inliner.
func (s *Server) inlines() bool {
	switch s.opts.Handler.(type) {
	case Router, Inliner:
		return true
	}
	return false
}

// serveInline is the serve function ServeMessages hands an
// InlineMessageListener.
func (s *Server) serveInline() func(Message) bool {
	return func(m Message) bool {
		// Counted as a goroutine's message is, so that Shutdown waits
		// for it; after Shutdown began the message goes the usual way
		// (the listener is closing and releases it).
		s.mu.Lock()
		if s.closing.Load() {
			s.mu.Unlock()
			return false
		}
		s.active.Add(1)
		s.mu.Unlock()
		defer s.active.Done()
		return s.serveMessageWith(m, true)
	}
}
