package netstack

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"time"

	"gvisor.dev/gvisor/pkg/tcpip"
	"gvisor.dev/gvisor/pkg/tcpip/header"
	"gvisor.dev/gvisor/pkg/tcpip/network/ipv4"
	"gvisor.dev/gvisor/pkg/tcpip/stack"
	"gvisor.dev/gvisor/pkg/tcpip/transport/tcp"

	"github.com/simdedge/simdedge/server"
)

// Device is the frame I/O the stack runs on: an AF_XDP socket in
// production, anything that moves Ethernet frames in tests.
type Device interface {
	// MAC is the interface's hardware address: the source of every frame
	// the stack sends, and the destination it accepts.
	MAC() net.HardwareAddr
	// MTU is the largest IP packet the link carries (the interface MTU,
	// Ethernet header excluded): 1500 on most Ethernet links. A frame is
	// at most MTU()+14 bytes.
	MTU() int
	// Transmit sends one Ethernet frame. It copies frame before returning
	// and is safe for concurrent use. An error drops the frame; TCP
	// retransmits.
	Transmit(frame []byte) error
}

// Defaults of Config.
const (
	// DefaultBacklog matches Linux's default net.core.somaxconn, which is
	// what Go's net.Listen uses on kernel TCP.
	DefaultBacklog = 4096
	// DefaultKeepAlive is the idle time before the first keep-alive probe
	// and the time between probes, Go's default for accepted kernel TCP
	// connections (net.ListenConfig.KeepAlive); after
	// keepAliveProbes unanswered probes the connection is reset.
	DefaultKeepAlive = 15 * time.Second
	// DefaultMaxNeighbors bounds the learnt neighbour table.
	DefaultMaxNeighbors = 1 << 16
	// minMTU is the smallest MTU every IPv4 host must accept (RFC 791);
	// a Device reporting less is misconfigured.
	minMTU = 576
	// keepAliveProbes is Go's (and Linux's tcp_keepalive_probes)
	// default count of unanswered probes.
	keepAliveProbes = 9
)

// Config configures a Stack.
type Config struct {
	// Address is the IPv4 address served: normally the kernel's own
	// address on the interface (see the package comment).
	Address netip.Addr
	// Port is the TCP port served.
	Port uint16
	// Backlog bounds the connections that finished their handshake but
	// are not accepted yet; beyond it gVisor answers SYNs with SYN
	// cookies. Zero means DefaultBacklog.
	Backlog int
	// ReceiveBuffer and SendBuffer are a connection's initial buffer
	// sizes in bytes; zero means gVisor's defaults (1 MiB each). Receive
	// buffers auto-tune up to max(ReceiveBuffer, 4 MiB); the receive
	// buffer also sets the window scale offered in the SYN-ACK. They are
	// limits, not allocations: an idle connection holds no buffer.
	ReceiveBuffer, SendBuffer int
	// KeepAlive is the TCP keep-alive idle time and probe interval; zero
	// means DefaultKeepAlive, negative disables probes. The server core's
	// timeouts (read header, idle, write) are separate: they are enforced
	// through the connections' deadlines, as on kernel TCP.
	KeepAlive time.Duration
	// MaxNeighbors bounds the learnt IP-to-MAC table; zero means
	// DefaultMaxNeighbors. When full, an arbitrary entry makes room.
	MaxNeighbors int
	// ACKDelay is how long the link may hold a pure ACK so that the
	// response, which carries the same acknowledgement, replaces it
	// (delayed ACK, which gVisor lacks; see ackhold.go). Zero means
	// DefaultACKDelay, negative sends every ACK at once.
	ACKDelay time.Duration
}

// Errors of New.
var (
	ErrConfig = errors.New("netstack: invalid config")
	ErrDevice = errors.New("netstack: unusable device")
	ErrStack  = errors.New("netstack: gVisor stack setup failed")
)

// nicID is the stack's only NIC.
const nicID tcpip.NICID = 1

// Stack is one gVisor network stack serving one TCP port on one address.
// Deliver may be called from several RX goroutines at once.
type Stack struct {
	cfg  Config
	dev  Device
	link *endpoint
	st   *stack.Stack
	ln   *listener

	closeOnce sync.Once
}

// New builds a stack on dev that listens on cfg.Address:cfg.Port.
func New(cfg Config, dev Device) (*Stack, error) {
	if err := cfg.normalize(); err != nil {
		return nil, err
	}
	if dev == nil {
		return nil, fmt.Errorf("%w: nil device", ErrDevice)
	}
	mac := dev.MAC()
	if len(mac) != header.EthernetAddressSize || mac[0]&1 != 0 {
		return nil, fmt.Errorf("%w: MAC address is not a unicast Ethernet address", ErrDevice)
	}
	if dev.MTU() < minMTU {
		return nil, fmt.Errorf("%w: MTU %d is below %d", ErrDevice, dev.MTU(), minMTU)
	}
	s := &Stack{cfg: cfg, dev: dev}
	s.link = newEndpoint(dev, cfg.Address, cfg.MaxNeighbors, cfg.ACKDelay)
	s.st = stack.New(stack.Options{
		NetworkProtocols:   []stack.NetworkProtocolFactory{ipv4.NewProtocol},
		TransportProtocols: []stack.TransportProtocolFactory{tcp.NewProtocolCUBIC},
	})
	if err := s.setup(); err != nil {
		s.st.Destroy()
		return nil, err
	}
	return s, nil
}

func (c *Config) normalize() error {
	if !c.Address.Is4() || c.Address.IsUnspecified() || c.Address.IsMulticast() {
		return fmt.Errorf("%w: address must be a unicast IPv4 address", ErrConfig)
	}
	if c.Port == 0 {
		return fmt.Errorf("%w: port must not be 0", ErrConfig)
	}
	if c.Backlog < 0 || c.ReceiveBuffer < 0 || c.SendBuffer < 0 || c.MaxNeighbors < 0 {
		return fmt.Errorf("%w: negative backlog, buffer size or neighbour limit", ErrConfig)
	}
	if c.Backlog == 0 {
		c.Backlog = DefaultBacklog
	}
	if c.KeepAlive == 0 {
		c.KeepAlive = DefaultKeepAlive
	}
	if c.MaxNeighbors == 0 {
		c.MaxNeighbors = DefaultMaxNeighbors
	}
	if c.ACKDelay == 0 {
		c.ACKDelay = DefaultACKDelay
	}
	return nil
}

// stackErr turns a tcpip.Error (not a Go error) into one wrapping ErrStack.
func stackErr(op string, e tcpip.Error) error {
	return fmt.Errorf("%w: %s: %s", ErrStack, op, e)
}

func (s *Stack) setup() error {
	if e := s.setTCPOptions(); e != nil {
		return e
	}
	if e := s.st.CreateNICWithOptions(nicID, s.link, stack.NICOptions{Name: "xdp"}); e != nil {
		return stackErr("create NIC", e)
	}
	addr := tcpip.AddrFrom4(s.cfg.Address.As4())
	pa := tcpip.ProtocolAddress{Protocol: ipv4.ProtocolNumber, AddressWithPrefix: addr.WithPrefix()}
	if e := s.st.AddProtocolAddress(nicID, pa, stack.AddressProperties{}); e != nil {
		return stackErr("add address", e)
	}
	// Every destination is "on link": the link endpoint sends each reply
	// to the MAC address its peer's frames came from, router or host.
	s.st.SetRouteTable([]tcpip.Route{{Destination: header.IPv4EmptySubnet, NIC: nicID}})
	ln, err := listen(s)
	if err != nil {
		return err
	}
	s.ln = ln
	return nil
}

func (s *Stack) setTCPOptions() error {
	sack := tcpip.TCPSACKEnabled(true)
	nagle := tcpip.TCPDelayEnabled(false) // Go's kernel TCP sets TCP_NODELAY too
	moderate := tcpip.TCPModerateReceiveBufferOption(true)
	rcv := tcpip.TCPReceiveBufferSizeRangeOption{Min: tcp.MinBufferSize, Default: tcp.DefaultReceiveBufferSize, Max: tcp.MaxBufferSize}
	if n := s.cfg.ReceiveBuffer; n > 0 {
		rcv.Default = max(n, tcp.MinBufferSize)
		rcv.Max = max(rcv.Max, rcv.Default)
	}
	snd := tcpip.TCPSendBufferSizeRangeOption{Min: tcp.MinBufferSize, Default: tcp.DefaultSendBufferSize, Max: tcp.MaxBufferSize}
	if n := s.cfg.SendBuffer; n > 0 {
		snd.Default = max(n, tcp.MinBufferSize)
		snd.Max = max(snd.Max, snd.Default)
	}
	for _, o := range []struct {
		name string
		opt  tcpip.SettableTransportProtocolOption
	}{
		{"SACK", &sack}, {"Nagle", &nagle}, {"receive buffer auto-tuning", &moderate},
		{"receive buffer", &rcv}, {"send buffer", &snd},
	} {
		if e := s.st.SetTransportProtocolOption(tcp.ProtocolNumber, o.opt); e != nil {
			return stackErr("TCP option "+o.name, e)
		}
	}
	return nil
}

// Deliver hands the stack one received Ethernet frame. The RX loop calls
// it for every TCP frame steered to the stack; frame is only read during
// the call (the stack copies what it keeps). Frames that are not IPv4 to
// the stack's address and MAC are dropped and counted.
func (s *Stack) Deliver(frame []byte) { s.link.deliver(frame) }

// Listener returns the stack's listener, serving Config.Address:Port. It
// is created by New, so SYNs are answered before anyone calls Accept;
// server.Server.ServeStream serves it unchanged. Closing it stops
// accepting but leaves the stack and its connections running.
func (s *Stack) Listener() server.StreamListener { return s.ln }

// Close stops the stack: the listener closes, every connection is reset
// and gVisor's goroutines end before Close returns. Shut the server down
// first to let connections finish gracefully. Frames delivered after
// Close are dropped.
func (s *Stack) Close() error {
	s.closeOnce.Do(func() {
		s.ln.Close()
		s.st.Close()
		s.st.Wait()
		s.link.detach()
	})
	return nil
}
