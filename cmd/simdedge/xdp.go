package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"

	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/config"
	"github.com/simdedge/simdedge/xdp"
	"github.com/simdedge/simdedge/xdp/netstack"
)

// xdpOpened is what openXDP opened.
type xdpOpened struct {
	stream server.StreamListener  // the userspace TCP stack; nil when tcp_port is 0
	msg    server.MessageListener // the datagram fast path; nil when udp_port is 0 or serves QUIC
	pc     net.PacketConn         // the udp_port for QUIC (http3: true), else nil
	closer io.Closer
}

// openXDP opens an AF_XDP listener: the userspace TCP stack's stream
// listener, and on the UDP port either the datagram fast path's message
// listener or, with h3, a PacketConn for QUIC; and the closer that stops
// the stack and detaches the XDP program. Its errors come from package xdp
// and say why XDP cannot start (permissions, interface, kernel, driver,
// queues).
func openXDP(c config.XDP, h3 bool, log *slog.Logger) (xdpOpened, error) {
	addr, err := netip.ParseAddr(c.Address)
	if err != nil || !addr.Is4() {
		return xdpOpened{}, fmt.Errorf("%w: address must be an IPv4 address", xdp.ErrConfig)
	}
	l, err := xdp.Listen(xdp.Config{
		Interface: c.Interface, Queues: c.Queues, Address: addr, TCPPort: c.TCPPort, UDPPort: c.UDPPort,
		Mode: xdp.Mode(c.Mode), RingSize: c.RingSize, FrameSize: c.FrameSize, Frames: c.Frames, Logger: log,
	})
	if err != nil {
		return xdpOpened{}, err
	}
	closer := &xdpCloser{l: l, unstat: addTransport(xdpStats(l, c.Interface))}
	out := xdpOpened{closer: closer}
	fail := func(err error) (xdpOpened, error) {
		closer.Close()
		return xdpOpened{}, err
	}
	if c.TCPPort != 0 {
		st, err := netstack.New(netstack.Config{Address: addr, Port: uint16(c.TCPPort)}, l)
		if err != nil {
			return fail(err)
		}
		l.HandleStream(st.Deliver)
		closer.st = st
		out.stream = st.Listener()
	}
	if h3 {
		if out.pc, err = l.PacketConn(); err != nil {
			return fail(err)
		}
	} else {
		out.msg = l.Datagrams()
	}
	return out, nil
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
