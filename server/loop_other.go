//go:build !linux

package server

import "net"

const loopSupported = false

// ServeLoop serves l with the goroutine engine: the event loop needs epoll
// (Linux).
func (s *Server) ServeLoop(l net.Listener) error {
	return s.ServeStream(TCPListener(l))
}

func loopTLSOn() bool { return false }

func (s *Server) serveLoopTLS(l net.Listener, o TLSOptions) error {
	return s.ServeStream(s.newTLSListener(l, o))
}
