package server

import "net"

// Engine names how kernel TCP connections are served.
type Engine string

const (
	// EngineGoroutine serves each connection on its own goroutine through
	// Go's netpoller (ServeStream). Every platform has it.
	EngineGoroutine Engine = "goroutine"
	// EngineLoop serves connections from one epoll event loop that reads,
	// parses and answers non-blocking routes in one pass (ServeLoop);
	// requests that may block move their connection to the goroutine
	// engine. Linux only; elsewhere ServeLoop falls back to goroutines.
	EngineLoop Engine = "loop"
)

// LoopSupported reports whether ServeLoop runs an event loop here (Linux)
// rather than falling back to the goroutine engine.
const LoopSupported = loopSupported

// ServeTCP serves the kernel TCP listener l with engine e (an empty
// Engine is EngineGoroutine).
func (s *Server) ServeTCP(l net.Listener, e Engine) error {
	if e == EngineLoop {
		return s.ServeLoop(l)
	}
	return s.ServeStream(TCPListener(l))
}
