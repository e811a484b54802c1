//go:build !rdma || !cgo

package rdma

import (
	"net"
	"time"

	"github.com/simdedge/simdedge/server"
)

// The not-supported twin of the message transport: ListenMessages and
// Dial fail with ErrNotSupported, so no value of these types exists.

// MessageListener accepts RDMA connections (not in this build).
type MessageListener struct{}

var _ server.MessageListener = (*MessageListener)(nil)

// ListenMessages returns ErrNotSupported in this build.
// A configuration error is reported first, as the real build would.
func ListenMessages(cfg ListenConfig) (*MessageListener, error) {
	if err := checkWindow(&cfg.Provider, &cfg.Credits, &cfg.MessageSize); err != nil {
		return nil, err
	}
	if _, err := checkPoll(cfg.Poll, cfg.Spin); err != nil {
		return nil, err
	}
	return nil, ErrNotSupported
}

// Receive returns ErrNotSupported.
func (ml *MessageListener) Receive() (server.Message, error) { return nil, ErrNotSupported }

// Close does nothing.
func (ml *MessageListener) Close() error { return nil }

// Addr returns nil.
func (ml *MessageListener) Addr() net.Addr { return nil }

var _ server.InlineMessageListener = (*MessageListener)(nil)

// SetInline does nothing.
func (ml *MessageListener) SetInline(func(server.Message) bool) {}

// ListenerStats counts a MessageListener's connections and buffers.
type ListenerStats struct {
	Accepted, Connected, Open, Held, Queued, Inlined int
}

// Stats returns zero counts.
func (ml *MessageListener) Stats() ListenerStats { return ListenerStats{} }

// Client sends requests over one connection (not in this build).
type Client struct{}

// Dial returns ErrNotSupported in this build.
// A configuration error is reported first, as the real build would.
func Dial(addr string, o DialOptions) (*Client, error) {
	if err := checkWindow(&o.Provider, &o.Credits, &o.MessageSize); err != nil {
		return nil, err
	}
	if _, err := checkPoll(o.Poll, o.Spin); err != nil {
		return nil, err
	}
	return nil, ErrNotSupported
}

// RoundTrip returns ErrNotSupported.
func (cl *Client) RoundTrip(req []byte, timeout time.Duration, part func(b []byte, more bool) error) error {
	return ErrNotSupported
}

// RoundTripEnvelope returns ErrNotSupported.
func (cl *Client) RoundTripEnvelope(env []byte, timeout time.Duration, part func(b []byte, more bool) error) error {
	return ErrNotSupported
}

// Close does nothing.
func (cl *Client) Close() error { return nil }

// ClientStats counts a client's buffers in use.
type ClientStats struct {
	Held, InFlight int
	Closed         bool
}

// Stats returns zero counts.
func (cl *Client) Stats() ClientStats { return ClientStats{} }

// Supported reports whether this build has the transport (it does not:
// it needs the rdma build tag and cgo).
func Supported() bool { return false }
