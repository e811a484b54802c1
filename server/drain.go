package server

// StartDrain begins the warning part of a drain (the drain delay of a
// process told to stop: Envoy's drain time, Kubernetes' preStop): the
// server goes on accepting and serving every request, but tells each
// client to take its next request elsewhere, so that clients with
// long-lived connections move away while load balancers, watching a
// readiness check, stop sending new ones.
//
//   - An HTTP/1.1 response begun from now on carries "Connection: close"
//     and its connection closes after it. A keep-alive connection that
//     sends nothing keeps waiting (Shutdown closes it later); one that
//     opens during the drain serves its first request, then closes.
//   - Every open HTTP/2 connection gets GOAWAY now (as Envoy sends at
//     the start of its drain): the streams it has started are served,
//     and the connection closes once they have ended. An HTTP/2
//     connection that opens during the drain gets GOAWAY when its first
//     stream ends, not at once, so that a client reconnecting to the same
//     address is served rather than sent round in a loop.
//
// Listeners stay open; Shutdown (or Close) ends the drain. StartDrain is
// idempotent and cannot be undone.
func (s *Server) StartDrain() {
	if s.draining.Swap(true) {
		return
	}
	s.h2.goaway(nil, true)
	s.h3.goaway(nil)
}

// closingConns reports whether a response should close its connection
// because the server is shutting down or draining.
func (s *Server) closingConns() bool {
	return s.closing.Load() || s.draining.Load()
}
