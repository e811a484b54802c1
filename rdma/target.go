package rdma

import (
	"errors"
	"sync"
	"time"
)

// Target is one upstream backend for the proxy (it implements
// server/proxy.MessageTarget, which this package does not import): a Client
// dialled on first use and again after its connection was lost. It is safe
// for concurrent use; requests share the one connection, pipelined.
type Target struct {
	addr string
	o    DialOptions

	mu     sync.Mutex
	c      *Client
	closed bool
}

// NewTarget returns a Target for the MessageListener at addr. It does not
// connect yet.
func NewTarget(addr string, o DialOptions) *Target { return &Target{addr: addr, o: o} }

// RoundTrip is Client.RoundTrip on the current connection. A lost
// connection or a timeout drops it; the next RoundTrip dials again.
func (t *Target) RoundTrip(req []byte, timeout time.Duration, part func(b []byte, more bool) error) error {
	return t.roundTrip((*Client).RoundTrip, req, timeout, part)
}

// RoundTripEnvelope is Client.RoundTripEnvelope on the current connection,
// reconnecting as RoundTrip does.
func (t *Target) RoundTripEnvelope(env []byte, timeout time.Duration, part func(b []byte, more bool) error) error {
	return t.roundTrip((*Client).RoundTripEnvelope, env, timeout, part)
}

func (t *Target) roundTrip(rt func(*Client, []byte, time.Duration, func([]byte, bool) error) error,
	req []byte, timeout time.Duration, part func(b []byte, more bool) error) error {
	c, err := t.client()
	if err != nil {
		return err
	}
	err = rt(c, req, timeout, part)
	if err != nil && (errors.Is(err, ErrConnLost) || errors.Is(err, ErrTimeout)) {
		t.drop(c)
	}
	return err
}

func (t *Target) client() (*Client, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil, ErrClosed
	}
	if t.c == nil {
		c, err := Dial(t.addr, t.o)
		if err != nil {
			return nil, err
		}
		t.c = c
	}
	return t.c, nil
}

func (t *Target) drop(c *Client) {
	t.mu.Lock()
	if t.c == c {
		t.c = nil
	}
	t.mu.Unlock()
	// Close waits for the RoundTrips still using c to hand back their
	// buffers, so it runs apart from this one.
	go c.Close()
}

// Close closes the connection; later RoundTrips fail with ErrClosed.
func (t *Target) Close() error {
	t.mu.Lock()
	c := t.c
	t.c, t.closed = nil, true
	t.mu.Unlock()
	if c != nil {
		return c.Close()
	}
	return nil
}
