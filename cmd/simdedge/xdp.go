package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/netip"

	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/config"
	"github.com/simdedge/simdedge/xdp"
	"github.com/simdedge/simdedge/xdp/netstack"
)

// openXDP opens an AF_XDP listener: the userspace TCP stack's stream
// listener (nil when tcp_port is 0), the datagram fast path's message
// listener (nil when udp_port is 0), and the closer that stops the stack
// and detaches the XDP program. Its errors come from package xdp and say
// why XDP cannot start (permissions, interface, kernel, driver, queues).
func openXDP(c config.XDP, log *slog.Logger) (server.StreamListener, server.MessageListener, io.Closer, error) {
	addr, err := netip.ParseAddr(c.Address)
	if err != nil || !addr.Is4() {
		return nil, nil, nil, fmt.Errorf("%w: address must be an IPv4 address", xdp.ErrConfig)
	}
	l, err := xdp.Listen(xdp.Config{
		Interface: c.Interface, Queues: c.Queues, Address: addr, TCPPort: c.TCPPort, UDPPort: c.UDPPort,
		Mode: xdp.Mode(c.Mode), RingSize: c.RingSize, FrameSize: c.FrameSize, Frames: c.Frames, Logger: log,
	})
	if err != nil {
		return nil, nil, nil, err
	}
	closer := &xdpCloser{l: l, unstat: addTransport(xdpStats(l, c.Interface))}
	var stream server.StreamListener
	if c.TCPPort != 0 {
		st, err := netstack.New(netstack.Config{Address: addr, Port: uint16(c.TCPPort)}, l)
		if err != nil {
			closer.unstat()
			l.Close()
			return nil, nil, nil, err
		}
		l.HandleStream(st.Deliver)
		closer.st = st
		stream = st.Listener()
	}
	return stream, l.Datagrams(), closer, nil
}

// xdpCloser stops the TCP stack, then detaches the program and releases
// the sockets (the stack transmits through them until it stops).
type xdpCloser struct {
	l      *xdp.Listener
	st     *netstack.Stack
	unstat func()
}

func (c *xdpCloser) Close() error {
	c.unstat()
	var err error
	if c.st != nil {
		err = c.st.Close()
	}
	return errors.Join(err, c.l.Close())
}
