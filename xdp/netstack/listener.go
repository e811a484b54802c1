package netstack

import (
	"errors"
	"fmt"
	"net"
	"sync"

	"gvisor.dev/gvisor/pkg/tcpip"
	"gvisor.dev/gvisor/pkg/tcpip/adapters/gonet"
	"gvisor.dev/gvisor/pkg/tcpip/network/ipv4"
	"gvisor.dev/gvisor/pkg/tcpip/transport/tcp"
	"gvisor.dev/gvisor/pkg/waiter"

	"github.com/simdedge/simdedge/server"
)

// ErrAccept reports that the listening endpoint failed for a reason other
// than Close (it wraps gVisor's description of the state).
var ErrAccept = errors.New("netstack: accept failed")

// listener is the server.StreamListener of a Stack. It is gonet's
// TCPListener with three differences the server core needs: the backlog
// is configurable, Accept after Close returns an error wrapping
// net.ErrClosed (how ServeStream tells shutdown from failure), and every
// accepted connection gets keep-alive probes.
type listener struct {
	s    *Stack
	ep   tcpip.Endpoint
	wq   waiter.Queue
	addr *net.TCPAddr

	closeOnce sync.Once
	closed    chan struct{}
}

var _ server.StreamListener = (*listener)(nil)

func listen(s *Stack) (*listener, error) {
	l := &listener{
		s:      s,
		addr:   &net.TCPAddr{IP: s.cfg.Address.AsSlice(), Port: int(s.cfg.Port)},
		closed: make(chan struct{}),
	}
	ep, e := s.st.NewEndpoint(tcp.ProtocolNumber, ipv4.ProtocolNumber, &l.wq)
	if e != nil {
		return nil, stackErr("new endpoint", e)
	}
	fa := tcpip.FullAddress{NIC: nicID, Addr: tcpip.AddrFrom4(s.cfg.Address.As4()), Port: s.cfg.Port}
	if e := ep.Bind(fa); e != nil {
		ep.Close()
		return nil, stackErr("bind", e)
	}
	if e := ep.Listen(s.cfg.Backlog); e != nil {
		ep.Close()
		return nil, stackErr("listen", e)
	}
	l.ep = ep
	return l, nil
}

// Accept waits for the next established connection.
func (l *listener) Accept() (server.Stream, error) {
	n, wq, e := l.ep.Accept(nil)
	if _, ok := e.(*tcpip.ErrWouldBlock); ok {
		entry, ready := waiter.NewChannelEntry(waiter.ReadableEvents)
		l.wq.EventRegister(&entry)
		defer l.wq.EventUnregister(&entry)
		for {
			n, wq, e = l.ep.Accept(nil)
			if _, ok := e.(*tcpip.ErrWouldBlock); !ok {
				break
			}
			select {
			case <-l.closed:
				return nil, l.opError(net.ErrClosed)
			case <-ready:
			}
		}
	}
	if e != nil {
		select {
		case <-l.closed:
			return nil, l.opError(net.ErrClosed)
		default:
		}
		// Only a listener that is no longer listening fails here
		// (gVisor's Accept has no transient errors): the stack was
		// closed under it.
		return nil, l.opError(fmt.Errorf("%w: %w: %s", ErrAccept, net.ErrClosed, e))
	}
	l.configure(n)
	return gonet.NewTCPConn(wq, n), nil
}

// configure sets the per-connection options gVisor does not inherit from
// the listener.
func (l *listener) configure(ep tcpip.Endpoint) {
	ka := l.s.cfg.KeepAlive
	if ka <= 0 {
		return
	}
	// Errors are impossible for these options on a TCP endpoint; a
	// failure would only leave gVisor's defaults (2 h idle, 75 s
	// interval) in place.
	idle, intvl := tcpip.KeepaliveIdleOption(ka), tcpip.KeepaliveIntervalOption(ka)
	_ = ep.SetSockOpt(&idle)
	_ = ep.SetSockOpt(&intvl)
	_ = ep.SetSockOptInt(tcpip.KeepaliveCountOption, keepAliveProbes)
	ep.SocketOptions().SetKeepAlive(true)
}

func (l *listener) opError(err error) error {
	return &net.OpError{Op: "accept", Net: "tcp", Addr: l.addr, Err: err}
}

// Close stops accepting; connections already accepted stay open.
func (l *listener) Close() error {
	l.closeOnce.Do(func() {
		close(l.closed)
		l.ep.Close()
	})
	return nil
}

// Addr is the served address and port.
func (l *listener) Addr() net.Addr { return l.addr }
