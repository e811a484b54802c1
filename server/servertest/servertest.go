// Package servertest provides in-memory transports for testing handlers,
// and anything built on package server, without sockets: the server runs
// the exact code of its stream and message loops over them.
//
//	l := servertest.NewMessageListener(0)
//	go s.ServeMessages(l)
//	replies, err := l.Exchange([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
package servertest

import (
	"net"

	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/internal/memnet"
)

// StreamListener is an in-memory server.StreamListener: Dial returns the
// client end of a synchronous pipe (net.Pipe) whose server end the server
// accepts.
type StreamListener struct{ l *memnet.StreamListener }

var _ server.StreamListener = (*StreamListener)(nil)

// NewStreamListener returns an open in-memory stream listener.
func NewStreamListener() *StreamListener { return &StreamListener{memnet.NewStreamListener()} }

// Dial connects to the listener. It blocks until the server accepts, and
// fails with net.ErrClosed once the listener is closed.
func (l *StreamListener) Dial() (net.Conn, error) { return l.l.Dial() }

// Accept implements server.StreamListener.
func (l *StreamListener) Accept() (server.Stream, error) {
	c, err := l.l.Accept()
	if err != nil {
		return nil, err
	}
	return c, nil
}

// Close implements server.StreamListener.
func (l *StreamListener) Close() error { return l.l.Close() }

// Addr implements server.StreamListener.
func (l *StreamListener) Addr() net.Addr { return l.l.Addr() }

// MessageListener is an in-memory server.MessageListener: Exchange hands
// it a request message and returns the response messages the server
// replied with.
type MessageListener struct{ l *memnet.MessageListener }

var _ server.MessageListener = (*MessageListener)(nil)

// NewMessageListener returns an open in-memory message listener whose
// replies are at most max bytes each (0: no limit), to exercise responses
// split over several messages.
func NewMessageListener(max int) *MessageListener {
	return &MessageListener{memnet.NewMessageListener(max)}
}

// Exchange sends req (which the server may modify in place, as a transport
// buffer) and waits until the server has released it. It returns the reply
// messages in order.
func (l *MessageListener) Exchange(req []byte) ([][]byte, error) { return l.l.Exchange(req) }

// Receive implements server.MessageListener.
func (l *MessageListener) Receive() (server.Message, error) {
	m, err := l.l.Receive()
	if err != nil {
		return nil, err
	}
	return m, nil
}

// Close implements server.MessageListener.
func (l *MessageListener) Close() error { return l.l.Close() }

// Addr implements server.MessageListener.
func (l *MessageListener) Addr() net.Addr { return l.l.Addr() }
