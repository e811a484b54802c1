package server

import "github.com/simdedge/simdedge/server/internal/memnet"

// The in-memory transports of server's own tests: memnet's, with server's
// interface types (package servertest does the same for other packages,
// which server's tests cannot import).

type memStreams struct{ *memnet.StreamListener }

func newMemStreams() memStreams { return memStreams{memnet.NewStreamListener()} }

func (l memStreams) Accept() (Stream, error) {
	c, err := l.StreamListener.Accept()
	if err != nil {
		return nil, err
	}
	return c, nil
}

type memMessages struct{ *memnet.MessageListener }

func newMemMessages(max int) memMessages { return memMessages{memnet.NewMessageListener(max)} }

func (l memMessages) Receive() (Message, error) {
	m, err := l.MessageListener.Receive()
	if err != nil {
		return nil, err
	}
	return m, nil
}
