package server

import (
	"errors"
	"io"
	"net"
	"time"
)

// The server core consumes two kinds of transport (see DESIGN.md, "Stream
// and message transports"). Both are defined here, by their consumer, so
// that kernel TCP, TCP on a userspace stack over AF_XDP, RDMA queues and UDP
// datagrams in UMEM plug in without changes to the core.

// StreamListener is a source of byte-stream connections: kernel TCP (see
// TCPListener), TCP on a userspace stack (xdp), or an in-memory pipe in tests
// (servertest.NewStreamListener). HTTP/1.1 frames the messages on the stream
// (Content-Length, chunked), with keep-alive and pipelining.
type StreamListener interface {
	// Accept blocks until a connection arrives or the listener is closed.
	// After Close it returns an error for which errors.Is(err,
	// net.ErrClosed) holds.
	Accept() (Stream, error)
	Close() error
	Addr() net.Addr
}

// Stream is one connection. Any net.Conn is a Stream. Read and Write are
// called by one goroutine (the connection loop); SetReadDeadline may also be
// called by Shutdown, from another goroutine, to wake an idle connection.
type Stream interface {
	io.ReadWriteCloser
	SetReadDeadline(t time.Time) error
	SetWriteDeadline(t time.Time) error
	RemoteAddr() net.Addr
	LocalAddr() net.Addr
}

// MessageListener is a source of request messages: one request per message,
// the message boundary being the framing (RDMA send/recv, UDP datagrams in
// UMEM frames). There is no keep-alive and no pipelining; a response is sent
// as one message, or as a sequence when it is larger than MaxReply.
type MessageListener interface {
	// Receive blocks until a message arrives or the listener is closed
	// (then errors.Is(err, net.ErrClosed)).
	Receive() (Message, error)
	Close() error
	Addr() net.Addr
}

// Message is one received request. Its bytes belong to the transport (a
// registered memory region, a UMEM frame) and stay valid and unchanged until
// Release; the server parses them in place and may rewrite the body region
// in place (chunked decoding), never beyond Data's length.
type Message interface {
	// Data is the whole request: head and body.
	Data() []byte
	RemoteAddr() net.Addr
	// Reply sends one response message; more reports that further
	// messages of the same response follow. b is only valid during the
	// call: the transport copies it or finishes sending before returning.
	Reply(b []byte, more bool) error
	// MaxReply is the largest b Reply accepts, 0 for no limit.
	MaxReply() int
	// Release returns the message's buffer to the transport. The server
	// calls it once, after the last Reply.
	Release()
}

// ErrServerClosed is returned by the Serve methods after Shutdown or Close.
var ErrServerClosed = errors.New("server: closed")

// TCPListener adapts a kernel listener (net.Listen("tcp", ...)) to a
// StreamListener.
func TCPListener(l net.Listener) StreamListener { return netListener{l} }

type netListener struct{ net.Listener }

func (l netListener) Accept() (Stream, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return c, nil
}
