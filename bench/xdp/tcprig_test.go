package xdp

import (
	"net"
	"net/netip"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/simdedge/simdedge/internal/testenv"
	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/xdp"
	"github.com/simdedge/simdedge/xdp/netstack"
	"github.com/simdedge/simdedge/xdp/xdptest"
)

// The TCP rig: one veth pair, the server core serving the benchmark
// handler on kernel TCP (port kernelPort) and on gVisor over AF_XDP
// (port gvisorPort, native mode), and the raw-frame generator (tcpgen)
// in the client namespace, from genIP.
const (
	kernelPort = 8080
	gvisorPort = 8081
	// genTimeout: no frame for this long fails the run.
	genTimeout = 2 * time.Second
)

// genIP is the generator's address: on the veth's subnet, not the client
// kernel's (see tcpGen).
var genIP = [4]byte{198, 18, 0, 3}

// tcpConns is the number of keep-alive connections (TCPGEN_CONNS
// overrides it); ackDelay is the stack's Config.ACKDelay (TCPGEN_ACKDELAY,
// a Go duration; negative turns the link's delayed ACK off, to measure
// what it saves).
var (
	tcpConns = 16
	ackDelay time.Duration
)

func init() {
	if n, err := strconv.Atoi(os.Getenv("TCPGEN_CONNS")); err == nil && n > 0 {
		tcpConns = n
	}
	if d, err := time.ParseDuration(os.Getenv("TCPGEN_ACKDELAY")); err == nil {
		ackDelay = d
	}
}

type tcpRig struct {
	v              *xdptest.Veth
	clientIfindex  int
	srvMAC, cliMAC [6]byte
	st             *netstack.Stack
	xl             *xdp.Listener
}

// newTCPRig starts both transports on one veth pair; they are stopped at
// cleanup (server, stack, AF_XDP, in that order).
func newTCPRig(tb testing.TB) *tcpRig {
	tb.Helper()
	r := &tcpRig{v: xdptest.NewVeth(tb)}
	v := r.v
	if err := xdptest.InNS(v.ServerNS, func() error {
		ifi, err := net.InterfaceByName(v.ServerIf)
		if err == nil {
			r.srvMAC = [6]byte(ifi.HardwareAddr)
		}
		return err
	}); err != nil {
		tb.Fatal(err)
	}
	if err := xdptest.InNS(v.ClientNS, func() error {
		ifi, err := net.InterfaceByName(v.ClientIf)
		if err == nil {
			r.cliMAC, r.clientIfindex = [6]byte(ifi.HardwareAddr), ifi.Index
		}
		return err
	}); err != nil {
		tb.Fatal(err)
	}
	// Nobody answers ARP for the generator's address: the server's
	// kernel is told its MAC (gVisor learns it from the frames).
	if _, err := xdptest.Run("ip", "-n", v.ServerNS, "neigh", "replace", xdptest.Addr(genIP),
		"lladdr", net.HardwareAddr(r.cliMAC[:]).String(), "dev", v.ServerIf, "nud", "permanent"); err != nil {
		tb.Fatal(err)
	}
	srv := server.New(server.Options{Handler: handler})
	addr := netip.AddrFrom4(v.ServerIP)
	var kl net.Listener
	err := xdptest.InNS(v.ServerNS, func() error {
		var err error
		kl, err = net.Listen("tcp4", netip.AddrPortFrom(addr, kernelPort).String())
		if err != nil {
			return err
		}
		r.xl, err = xdp.Listen(xdp.Config{Interface: v.ServerIf, Address: addr, TCPPort: gvisorPort, Mode: xdp.Native})
		return err
	})
	if err != nil {
		if kl != nil {
			kl.Close()
		}
		testenv.Need(tb, testenv.RequireXDP, false, "cannot set up AF_XDP: "+err.Error())
	}
	r.st, err = netstack.New(netstack.Config{Address: addr, Port: gvisorPort, ACKDelay: ackDelay}, r.xl)
	if err != nil {
		kl.Close()
		r.xl.Close()
		tb.Fatal(err)
	}
	r.xl.HandleStream(r.st.Deliver)
	served := make(chan error, 2)
	go func() { served <- srv.ServeStream(server.TCPListener(kl)) }()
	go func() { served <- srv.ServeStream(r.st.Listener()) }()
	tb.Cleanup(func() {
		srv.Close()
		<-served
		<-served
		r.st.Close()
		r.xl.Close()
	})
	return r
}

// tcpResult is one closed-loop run of the generator.
type tcpResult struct {
	wall, cpu, genCPU, sendCPU time.Duration
}

// TestTCPGen checks that the generator's requests are answered by each
// transport, and through AF_XDP and gVisor for the gVisor port.
func TestTCPGen(t *testing.T) {
	r := newTCPRig(t)
	for _, port := range []uint16{kernelPort, gvisorPort} {
		if _, err := r.run(port, 4, 400); err != nil {
			t.Fatal(err)
		}
	}
	s := r.st.Stats()
	if s.RxFrames < 400 || s.TxFrames < 400 {
		t.Fatalf("gVisor saw %d frames and sent %d for 400 requests: %+v", s.RxFrames, s.TxFrames, s)
	}
}

// BenchmarkTCPKeepAlive: server CPU per keep-alive "GET /" and requests
// per second of kernel TCP (transport=kernel) and gVisor over AF_XDP
// (transport=gvisor), driven by the raw-frame generator. Compare with
// benchstat -col /transport.
func BenchmarkTCPKeepAlive(b *testing.B) {
	r := newTCPRig(b)
	for _, tr := range []struct {
		name string
		port uint16
	}{{"kernel", kernelPort}, {"gvisor", gvisorPort}} {
		b.Run("transport="+tr.name, func(b *testing.B) {
			res, err := r.run(tr.port, tcpConns, b.N)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(res.wall.Nanoseconds())/float64(b.N), "ns/op")
			b.ReportMetric(float64(res.cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(res.genCPU.Nanoseconds())/float64(b.N), "gen-cpu-ns/op")
			b.ReportMetric(float64(res.sendCPU.Nanoseconds())/float64(b.N), "send-cpu-ns/op")
			b.ReportMetric(float64(b.N)/res.wall.Seconds(), "req/s")
		})
	}
}
