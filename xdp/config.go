package xdp

import (
	"fmt"
	"log/slog"
	"math/bits"
	"net/netip"
	"os"
)

// Mode is how the XDP program is attached to the interface.
type Mode string

const (
	// Native runs the program in the driver, before an skb exists.
	Native Mode = "native"
	// Generic runs it after the kernel built the skb: slower, but every
	// driver supports it.
	Generic Mode = "generic"
)

// Defaults of Config's sizes.
const (
	DefaultRingSize  = 2048
	DefaultFrameSize = 4096
)

// Config describes the transport on one interface.
type Config struct {
	// Interface is the network interface's name.
	Interface string
	// Queues are the RX queues to serve, one AF_XDP socket each
	// (default: queue 0).
	Queues []int
	// Address is the IPv4 address whose traffic is steered; the zero
	// Addr steers the ports on every address.
	Address netip.Addr
	// TCPPort is steered to the userspace TCP stack (HandleStream), and
	// UDPPort to the datagram fast path (Datagrams); 0 disables either.
	TCPPort, UDPPort int
	// Mode is Native (default) or Generic.
	Mode Mode
	// RingSize is the entries of each ring (a power of two), FrameSize the
	// bytes of a UMEM frame (2048 or 4096 on 4 KiB pages), Frames the UMEM
	// frames per queue (default 2*RingSize), half for receiving, half for
	// transmitting. Receive frames beyond the fill ring's size wait in a
	// spare list; transmit frames beyond the TX ring's wait for a slot.
	RingSize, FrameSize, Frames int
	// Logger receives start-up and shutdown events (default: discard).
	Logger *slog.Logger
}

// withDefaults fills the zero fields and validates the rest.
func (c Config) withDefaults() (Config, error) {
	if len(c.Queues) == 0 {
		c.Queues = []int{0}
	}
	if c.Mode == "" {
		c.Mode = Native
	}
	if c.RingSize == 0 {
		c.RingSize = DefaultRingSize
	}
	if c.FrameSize == 0 {
		c.FrameSize = DefaultFrameSize
	}
	if c.Frames == 0 {
		c.Frames = 2 * c.RingSize
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	switch {
	case c.Interface == "":
		return c, fmt.Errorf("%w: no interface", ErrConfig)
	case c.Mode != Native && c.Mode != Generic:
		return c, fmt.Errorf("%w: mode must be %q or %q", ErrConfig, Native, Generic)
	case c.Address.IsValid() && !c.Address.Is4():
		return c, fmt.Errorf("%w: address must be IPv4", ErrConfig)
	case c.TCPPort < 0 || c.TCPPort > 65535 || c.UDPPort < 0 || c.UDPPort > 65535:
		return c, fmt.Errorf("%w: ports must be 0..65535", ErrConfig)
	case c.TCPPort == 0 && c.UDPPort == 0:
		return c, fmt.Errorf("%w: neither tcp_port nor udp_port is set", ErrConfig)
	case c.RingSize < 64 || c.RingSize > 1<<16 || bits.OnesCount(uint(c.RingSize)) != 1:
		return c, fmt.Errorf("%w: ring_size must be a power of two in 64..65536", ErrConfig)
	case c.FrameSize < 2048 || c.FrameSize > os.Getpagesize() || bits.OnesCount(uint(c.FrameSize)) != 1:
		return c, fmt.Errorf("%w: frame_size must be a power of two in 2048..%d", ErrConfig, os.Getpagesize())
	case c.Frames < 2 || c.Frames > 1<<20:
		return c, fmt.Errorf("%w: frames must be in 2..1048576", ErrConfig)
	}
	seen := map[int]bool{}
	for _, q := range c.Queues {
		if q < 0 || q >= maxQueues || seen[q] {
			return c, fmt.Errorf("%w: queues must be distinct and in 0..%d", ErrConfig, maxQueues-1)
		}
		seen[q] = true
	}
	return c, nil
}
