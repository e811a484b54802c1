package rdma

import (
	"errors"
	"fmt"
	"net/netip"
	"time"
)

// The message transport: requests over connected endpoints, one request
// per message, served by server.ServeMessages (ListenMessages) and sent by
// Client (Dial). The wire protocol is in proto.go, flow control in
// proto_credit.go.
//
// Buffers. Each connection registers one region of Credits receive slots
// and one of send slots, MessageSize bytes each. A request that fits a
// slot is parsed by the server in place in its receive slot
// (Message.Data is a view of the registered region); the slot is posted
// again after Release. Responses are copied once, from the server's output
// buffer into a registered send slot.
//
// Rendezvous. A request larger than a slot goes as an advert: its first
// bytes inline, the rest in a region the client registered for it. The
// server registers a region for the whole request, copies the inline part
// to its front and RDMA-READs the rest behind it, so the request is again
// one contiguous view, parsed in place; then it answers kindDone and the
// client frees its region. A response part larger than a slot goes the
// other way: the server copies it into a region of its own and advertises
// it, the client reads it and answers kindDone, and only then does Reply
// return (the server core hands Reply its output buffer, valid only during
// the call; waiting also bounds the server's registered memory to one
// advert per exchange). MaxReply is therefore 0: a response goes in as few
// messages as the server flushes, never split to fit a slot.
//
// Polling. One goroutine per connection drains the completion queue and
// blocks in Endpoint.Wait (Go's network poller) when it is empty. It never
// blocks on anything else: requests go to the listener's queue, response
// parts to the waiting caller's channel (sized so that it cannot fill),
// and control messages that find no credit wait in a queue that the next
// grant flushes. A client's poller lends the queue when no call awaits a
// piece: the next RoundTrip then reads the queue itself until its
// response is in, saving the goroutine switch from the poller to the
// caller (transport_conn.go, "Lending").
//
// Cgo calls per request. Released receive slots are not posted one by
// one: they wait for the next send or the poller's next poll and go in the
// same cgo call (Endpoint.exchange). Sends ask for a completion only every
// few messages (FI_SELECTIVE_COMPLETION when the provider has it), since
// each completion wakes the peer-waiting poller once more; a completion
// frees its slot and every send posted before it.

// Defaults of ListenConfig and DialOptions.
const (
	DefaultProvider    = "tcp"
	DefaultCredits     = 32
	DefaultMessageSize = 64 << 10
	// DefaultMaxBody bounds a rendezvous request (what the server
	// registers for one); server.Limits.MaxBodyBytes applies after it.
	DefaultMaxBody = 1 << 30
	// minMessageSize leaves room for a rendezvous advert with a useful
	// inline prefix.
	minMessageSize = 1 << 10
	maxMessageSize = 64 << 20
)

// ListenConfig configures ListenMessages.
type ListenConfig struct {
	// Address is where to listen, "127.0.0.1:7471".
	Address string
	// Provider is the libfabric provider ("tcp", "verbs"); empty means
	// DefaultProvider.
	Provider string
	// Credits is the number of receive buffers posted per connection: the
	// requests a client may have in flight (one is kept for control
	// messages). At least 4.
	Credits int
	// MessageSize is the size of each buffer; larger requests and
	// responses move by rendezvous.
	MessageSize int
	// MaxBody bounds a rendezvous request; larger ones are refused with
	// ErrTooLarge at the client. 0 means DefaultMaxBody.
	MaxBody int64
	// ReplyTimeout bounds how long a response part sent by rendezvous
	// waits for the client to read it; on expiry the connection is closed
	// (the client holds the server's buffer). 0 means
	// DefaultReplyTimeout.
	ReplyTimeout time.Duration
	// Poll is how each connection's poller waits for completions:
	// PollBlock (default) or PollBusy (see PollMode).
	Poll PollMode
	// Spin is PollBusy's spin budget; 0 means DefaultSpin. It must be
	// 0 with PollBlock.
	Spin time.Duration
	// NoInline makes every request go through Receive to the server
	// core's goroutines. By default, when the server offers it
	// (server.InlineMessageListener: its handler is a server.Inliner),
	// a request that fits a message is served on the connection's
	// poller, the goroutine that read its completion, when the Inliner
	// offers a handler for it: no goroutine hand-off per request.
	NoInline bool
}

// DefaultReplyTimeout is ListenConfig.ReplyTimeout's default.
const DefaultReplyTimeout = 30 * time.Second

// DialOptions configures Dial.
type DialOptions struct {
	// Provider as in ListenConfig.
	Provider string
	// Credits is the number of receive buffers the client posts: response
	// messages in flight towards it. At least 4.
	Credits int
	// MessageSize must not exceed the server's; 0 means
	// DefaultMessageSize.
	MessageSize int
	// Timeout bounds connecting; 0 means 5 s.
	Timeout time.Duration
	// Local is a local address (or host name) whose domain dials: for the
	// tcp provider, the interface. Empty picks the loopback domain when
	// the server's address is a loopback address, and leaves the choice
	// to the provider otherwise. Never the server's address: a domain is
	// local (Options.Node).
	Local string
	// Poll and Spin as in ListenConfig: how the client's completion
	// queue reader (the poller, or a RoundTrip driving the queue) waits.
	Poll PollMode
	Spin time.Duration
}

// localNode is the Options.Node a client dialling host uses.
func localNode(host string, o *DialOptions) string {
	if o.Local != "" {
		return o.Local
	}
	if ip, err := netip.ParseAddr(host); err == nil && ip.IsLoopback() || host == "localhost" {
		return host
	}
	return ""
}

// Errors of the message transport.
var (
	// ErrConfig: a ListenConfig or DialOptions field out of range.
	ErrConfig = errors.New("rdma: invalid transport configuration")
	// ErrConnLost: the connection failed or closed while the request was
	// in flight; the request may or may not have been served.
	ErrConnLost = errors.New("rdma: connection lost")
)

// TimeoutError is returned by Client.RoundTrip when no response piece
// arrived within the timeout; it wraps ErrTimeout and has the Timeout
// method of net.Error.
type TimeoutError struct{}

func (TimeoutError) Error() string   { return "rdma: no response within the timeout" }
func (TimeoutError) Timeout() bool   { return true }
func (TimeoutError) Temporary() bool { return false }
func (TimeoutError) Unwrap() error   { return ErrTimeout }

func checkWindow(provider *string, credits, msgSize *int) error {
	if *provider == "" {
		*provider = DefaultProvider
	}
	if *credits == 0 {
		*credits = DefaultCredits
	}
	if *msgSize == 0 {
		*msgSize = DefaultMessageSize
	}
	if *credits < minCredits || *credits > maxCredits/4 {
		return fmt.Errorf("%w: credits must be between %d and %d", ErrConfig, minCredits, maxCredits/4)
	}
	if *msgSize < minMessageSize || *msgSize > maxMessageSize {
		return fmt.Errorf("%w: message size must be between %d and %d bytes", ErrConfig, minMessageSize, maxMessageSize)
	}
	return nil
}
