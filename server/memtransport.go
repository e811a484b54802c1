package server

import (
	"net"
	"sync"
)

// In-memory transports. Tests of the core, and of any package that builds
// on it, use them to run the exact code paths of the stream and message
// loops without sockets.

// memAddr is the address of an in-memory transport.
type memAddr string

func (a memAddr) Network() string { return "mem" }
func (a memAddr) String() string  { return string(a) }

// MemStreamListener is an in-memory StreamListener: Dial returns the client
// end of a synchronous pipe (net.Pipe) whose server end Accept returns.
type MemStreamListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

// NewMemStreamListener returns an open in-memory stream listener.
func NewMemStreamListener() *MemStreamListener {
	return &MemStreamListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

// Dial connects to the listener. It blocks until the server accepts, and
// fails with net.ErrClosed once the listener is closed.
func (l *MemStreamListener) Dial() (net.Conn, error) {
	client, srv := net.Pipe()
	select {
	case l.conns <- srv:
		return client, nil
	case <-l.done:
		client.Close()
		srv.Close()
		return nil, net.ErrClosed
	}
}

// Accept implements StreamListener.
func (l *MemStreamListener) Accept() (Stream, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

// Close implements StreamListener.
func (l *MemStreamListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

// Addr implements StreamListener.
func (l *MemStreamListener) Addr() net.Addr { return memAddr("mem-stream") }

// MemMessageListener is an in-memory MessageListener: Exchange hands it a
// request message and returns the response messages the server replied with.
type MemMessageListener struct {
	// Max is the largest reply message (0: no limit), to exercise
	// responses split over several messages.
	Max  int
	msgs chan *memMessage
	done chan struct{}
	once sync.Once
}

// NewMemMessageListener returns an open in-memory message listener whose
// replies are at most max bytes each (0: no limit).
func NewMemMessageListener(max int) *MemMessageListener {
	return &MemMessageListener{Max: max, msgs: make(chan *memMessage), done: make(chan struct{})}
}

type memMessage struct {
	l        *MemMessageListener
	data     []byte
	replies  [][]byte
	released chan struct{}
}

// Exchange sends req (which the server may modify in place, as a transport
// buffer) and waits until the server has released it. It returns the reply
// messages in order.
func (l *MemMessageListener) Exchange(req []byte) ([][]byte, error) {
	m := &memMessage{l: l, data: req, released: make(chan struct{})}
	select {
	case l.msgs <- m:
	case <-l.done:
		return nil, net.ErrClosed
	}
	<-m.released
	return m.replies, nil
}

// Receive implements MessageListener.
func (l *MemMessageListener) Receive() (Message, error) {
	select {
	case m := <-l.msgs:
		return m, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

// Close implements MessageListener.
func (l *MemMessageListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

// Addr implements MessageListener.
func (l *MemMessageListener) Addr() net.Addr { return memAddr("mem-message") }

func (m *memMessage) Data() []byte         { return m.data }
func (m *memMessage) RemoteAddr() net.Addr { return memAddr("mem-client") }
func (m *memMessage) MaxReply() int        { return m.l.Max }
func (m *memMessage) Release()             { close(m.released) }

func (m *memMessage) Reply(b []byte, more bool) error {
	if m.l.Max > 0 && len(b) > m.l.Max {
		return errReplyTooLarge
	}
	m.replies = append(m.replies, append([]byte(nil), b...))
	return nil
}
