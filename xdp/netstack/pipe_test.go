package netstack

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"

	"gvisor.dev/gvisor/pkg/tcpip"
	"gvisor.dev/gvisor/pkg/tcpip/adapters/gonet"
	"gvisor.dev/gvisor/pkg/tcpip/header"
	"gvisor.dev/gvisor/pkg/tcpip/network/ipv4"
	"gvisor.dev/gvisor/pkg/tcpip/stack"
	"gvisor.dev/gvisor/pkg/tcpip/transport/tcp"
)

// The test double of the link: two memDevs joined by goroutines that carry
// each transmitted frame to the other side's Deliver. Frames are copied
// and queued, as on a wire, so a stack never re-enters itself from inside
// Transmit.

var (
	serverMAC  = net.HardwareAddr{0x02, 0, 0, 0, 0, 1}
	clientMAC  = net.HardwareAddr{0x02, 0, 0, 0, 0, 2}
	serverAddr = netip.MustParseAddr("198.18.0.1")
	clientAddr = netip.MustParseAddr("198.18.0.2")
)

const (
	testMTU  = 1500
	testPort = 8080
	// wireQueue is how many frames may be in flight one way; more are
	// dropped, as a full NIC ring would, and TCP retransmits.
	wireQueue = 4096
)

var errWireFull = errors.New("test wire: queue full")

// memDev is a Device whose frames go into a queue.
type memDev struct {
	mac net.HardwareAddr
	out chan []byte
	// tap, when set, sees (and may alter) each frame before it is queued.
	tap func(frame []byte)
}

func newMemDev(mac net.HardwareAddr) *memDev {
	return &memDev{mac: mac, out: make(chan []byte, wireQueue)}
}

func (d *memDev) MAC() net.HardwareAddr { return d.mac }
func (d *memDev) MTU() int              { return testMTU }

func (d *memDev) Transmit(frame []byte) error {
	f := append([]byte(nil), frame...)
	if d.tap != nil {
		d.tap(f)
	}
	select {
	case d.out <- f:
		return nil
	default:
		return errWireFull
	}
}

// wire carries d's frames to deliver until the test ends.
func wire(t testing.TB, d *memDev, deliver func([]byte)) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case f := <-d.out:
				deliver(f)
			case <-done:
				return
			}
		}
	}()
	t.Cleanup(func() { close(done); wg.Wait() })
}

// pair is a Stack serving serverAddr:testPort and a client gVisor stack,
// joined by a wire.
type pair struct {
	srv    *Stack
	client *stack.Stack
	srvDev *memDev
	cliDev *memDev
}

// newPair builds the pair. tap (may be nil) sees the server's frames.
func newPair(t testing.TB, cfg Config, tap func([]byte)) *pair {
	t.Helper()
	cfg.Address, cfg.Port = serverAddr, testPort
	p := &pair{srvDev: newMemDev(serverMAC), cliDev: newMemDev(clientMAC)}
	p.srvDev.tap = tap
	var err error
	p.srv, err = New(cfg, p.srvDev)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.srv.Close() })
	// The client is a plain gVisor stack on the same link endpoint; it
	// dials, so it is told the server's MAC instead of learning it.
	cl := newEndpoint(p.cliDev, clientAddr, 16, 0)
	cl.neigh.learn(serverAddr.As4(), [6]byte(serverMAC))
	p.client = stack.New(stack.Options{
		NetworkProtocols:   []stack.NetworkProtocolFactory{ipv4.NewProtocol},
		TransportProtocols: []stack.TransportProtocolFactory{tcp.NewProtocol},
	})
	t.Cleanup(p.client.Destroy)
	if e := p.client.CreateNIC(nicID, cl); e != nil {
		t.Fatal(e)
	}
	pa := tcpip.ProtocolAddress{Protocol: ipv4.ProtocolNumber, AddressWithPrefix: tcpip.AddrFrom4(clientAddr.As4()).WithPrefix()}
	if e := p.client.AddProtocolAddress(nicID, pa, stack.AddressProperties{}); e != nil {
		t.Fatal(e)
	}
	p.client.SetRouteTable([]tcpip.Route{{Destination: header.IPv4EmptySubnet, NIC: nicID}})
	wire(t, p.srvDev, cl.deliver)
	wire(t, p.cliDev, p.srv.Deliver)
	return p
}

// dial opens a client connection to the server.
func (p *pair) dial(ctx context.Context) (net.Conn, error) {
	fa := tcpip.FullAddress{NIC: nicID, Addr: tcpip.AddrFrom4(serverAddr.As4()), Port: testPort}
	return gonet.DialContextTCP(ctx, p.client, fa, ipv4.ProtocolNumber)
}

func (p *pair) mustDial(t testing.TB) net.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	c, err := p.dial(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// testTimeout bounds every wait of these tests.
const testTimeout = 10 * time.Second
