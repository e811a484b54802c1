// Package memnet holds the in-memory transports: a stream listener over
// net.Pipe and a message listener whose messages are exchanged in process.
// They run the exact code paths of server's stream and message loops
// without sockets. The package imports nothing of server, so that server's
// own tests can use it; package servertest gives it server's interface
// types for everyone else.
package memnet

import (
	"errors"
	"net"
	"sync"
)

// ErrReplyTooLarge is returned by Message.Reply when the server sends a
// reply larger than the listener's Max.
var ErrReplyTooLarge = errors.New("memnet: reply larger than the transport's maximum")

// Addr is the address of an in-memory transport.
type Addr string

func (a Addr) Network() string { return "mem" }
func (a Addr) String() string  { return string(a) }

// StreamListener accepts in-memory connections: Dial returns the client
// end of a synchronous pipe (net.Pipe) whose server end Accept returns.
type StreamListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

// NewStreamListener returns an open in-memory stream listener.
func NewStreamListener() *StreamListener {
	return &StreamListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

// Dial connects to the listener. It blocks until the server accepts, and
// fails with net.ErrClosed once the listener is closed.
func (l *StreamListener) Dial() (net.Conn, error) {
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

// Accept returns the server end of the next Dial, or net.ErrClosed once
// the listener is closed.
func (l *StreamListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

// Close closes the listener; it may be called more than once.
func (l *StreamListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

// Addr returns the listener's address.
func (l *StreamListener) Addr() net.Addr { return Addr("mem-stream") }

// MessageListener is an in-memory message source: Exchange hands it a
// request message and returns the response messages the server replied
// with.
type MessageListener struct {
	// Max is the largest reply message (0: no limit), to exercise
	// responses split over several messages.
	Max  int
	msgs chan *Message
	done chan struct{}
	once sync.Once
}

// NewMessageListener returns an open in-memory message listener whose
// replies are at most max bytes each (0: no limit).
func NewMessageListener(max int) *MessageListener {
	return &MessageListener{Max: max, msgs: make(chan *Message), done: make(chan struct{})}
}

// NewMessage returns a message of l that is not queued, for a test that
// hands it to the server itself.
func (l *MessageListener) NewMessage(data []byte) *Message {
	return &Message{l: l, data: data, released: make(chan struct{})}
}

// Exchange sends req (which the server may modify in place, as a transport
// buffer) and waits until the server has released it. It returns the reply
// messages in order.
func (l *MessageListener) Exchange(req []byte) ([][]byte, error) {
	m := l.NewMessage(req)
	select {
	case l.msgs <- m:
	case <-l.done:
		return nil, net.ErrClosed
	}
	<-m.released
	return m.replies, nil
}

// Receive returns the next message that Exchange sends, or net.ErrClosed
// once the listener is closed.
func (l *MessageListener) Receive() (*Message, error) {
	select {
	case m := <-l.msgs:
		return m, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

// Close closes the listener; it may be called more than once.
func (l *MessageListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

// Done is closed when the listener is closed (for a listener that wraps
// this one and queues messages of its own).
func (l *MessageListener) Done() <-chan struct{} { return l.done }

// Addr returns the listener's address.
func (l *MessageListener) Addr() net.Addr { return Addr("mem-message") }

// Message is one request message and the replies it got.
type Message struct {
	l        *MessageListener
	data     []byte
	replies  [][]byte
	released chan struct{}
}

func (m *Message) Data() []byte         { return m.data }
func (m *Message) RemoteAddr() net.Addr { return Addr("mem-client") }
func (m *Message) MaxReply() int        { return m.l.Max }
func (m *Message) Release()             { close(m.released) }

// Reply records a copy of b as the next reply.
func (m *Message) Reply(b []byte, more bool) error {
	if m.l.Max > 0 && len(b) > m.l.Max {
		return ErrReplyTooLarge
	}
	m.replies = append(m.replies, append([]byte(nil), b...))
	return nil
}

// Released reports whether the server has released the message.
func (m *Message) Released() bool {
	select {
	case <-m.released:
		return true
	default:
		return false
	}
}

// Replies returns the replies so far (read them after Released).
func (m *Message) Replies() [][]byte { return m.replies }
