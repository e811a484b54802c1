package xdp

import (
	"encoding/binary"

	"fmt"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"

	"github.com/simdedge/simdedge/internal/testenv"
	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/xdp"
	"github.com/simdedge/simdedge/xdp/xdptest"
)

const (
	serverPort = 8081
	clientPort = 40000
	// batch frames per injecting syscall (the kernel's live-frames batch
	// size); window requests outstanding at most.
	batch  = 64
	window = 512
	// stallTimeout: no answer for this long means the outstanding
	// requests were lost.
	stallTimeout = 2 * time.Second
	// udpRcvBuf is the UDP socket's receive buffer: room for the window
	// with margin, so the baseline drops nothing.
	udpRcvBuf = 8 << 20
)

// request is the benchmark's request: small, as a datagram request is.
var request = []byte("GET / HTTP/1.1\r\nHost: bench\r\n\r\n")

// rig is one transport serving the benchmark handler on its own veth pair.
type rig struct {
	name    string
	v       *xdptest.Veth
	ifindex int
	prog    *xdp.Program
	frame   []byte
	served  atomic.Int64
	wakeAt  atomic.Int64
	waiting atomic.Bool
	efd     int // eventfd the generator sleeps on
	stats   func() string
}

// handler is the benchmark's handler, the same for both transports.
var handler = server.HandlerFunc(func(w *server.ResponseWriter, _ *server.Request) { w.WriteString("ok\n") })

// counting wraps a transport's message listener to count requests once
// released (answered, and the receive buffer back with the transport), so
// the generator's window bounds the buffers in use.
type counting struct {
	server.MessageListener
	r    *rig
	pool sync.Pool
}

type countedMsg struct {
	server.Message
	c *counting
}

func (c *counting) Receive() (server.Message, error) {
	m, err := c.MessageListener.Receive()
	if err != nil {
		return nil, err
	}
	cm, _ := c.pool.Get().(*countedMsg)
	if cm == nil {
		cm = &countedMsg{c: c}
	}
	cm.Message = m
	return cm, nil
}

func (m *countedMsg) Release() {
	m.Message.Release()
	r := m.c.r
	m.Message = nil
	m.c.pool.Put(m)
	if r.served.Add(1) >= r.wakeAt.Load() && r.waiting.CompareAndSwap(true, false) {
		unix.Write(r.efd, eventOne[:])
	}
}

// eventOne is the eventfd increment that wakes the generator.
var eventOne = [8]byte{1}

// newRig builds transport "xdp" (xdp.Listener, native mode) or "udp" (the
// same steering program attached, no socket registered, so its fallback
// passes the frames to a kernel UDP socket).
func newRig(tb testing.TB, transport string) *rig {
	tb.Helper()
	r := &rig{name: transport, v: xdptest.NewVeth(tb)}
	r.wakeAt.Store(1 << 62)
	efd, err := unix.Eventfd(0, unix.EFD_CLOEXEC)
	if err != nil {
		tb.Fatal(err)
	}
	r.efd = efd
	tb.Cleanup(func() { unix.Close(efd) })
	v := r.v
	var srvMAC, cliMAC net.HardwareAddr
	if err := xdptest.InNS(v.ServerNS, func() error {
		ifi, err := net.InterfaceByName(v.ServerIf)
		if err == nil {
			srvMAC, r.ifindex = ifi.HardwareAddr, ifi.Index
		}
		return err
	}); err != nil {
		tb.Fatal(err)
	}
	// The replies' destination: a socket that absorbs them (nothing
	// reads it; the kernel drops what overflows, sending no ICMP).
	var sink *net.UDPConn
	if err := xdptest.InNS(v.ClientNS, func() error {
		ifi, err := net.InterfaceByName(v.ClientIf)
		if err != nil {
			return err
		}
		cliMAC = ifi.HardwareAddr
		sink, err = net.ListenUDP("udp4", &net.UDPAddr{IP: net.IP(v.ClientIP[:]), Port: clientPort})
		return err
	}); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { sink.Close() })
	// The wire: replies end at the client's veth, dropped by XDP before
	// its kernel spends anything on them, as if they had left on a NIC.
	// The server's kernel then never hears from the client, so it gets
	// the client's MAC as a permanent neighbour (the baseline's replies
	// need it; the fast path copies it from the request frame).
	if err := xdptest.InNS(v.ClientNS, func() error { return dropAll(tb, v.ClientIf) }); err != nil {
		tb.Fatal(err)
	}
	if _, err := xdptest.Run("ip", "-n", v.ServerNS, "neigh", "replace", xdptest.Addr(v.ClientIP),
		"lladdr", cliMAC.String(), "dev", v.ServerIf, "nud", "permanent"); err != nil {
		tb.Fatal(err)
	}
	r.frame = requestFrame(srvMAC, cliMAC, v.ServerIP, v.ClientIP)

	addr := netip.AddrFrom4(v.ServerIP)
	var ml server.MessageListener
	var closer func() error
	err = xdptest.InNS(v.ServerNS, func() error {
		switch transport {
		case "xdp":
			l, err := xdp.Listen(xdp.Config{Interface: v.ServerIf, Address: addr, UDPPort: serverPort, Mode: xdp.Native})
			if err != nil {
				return err
			}
			r.prog, ml, closer = l.Program(), l.Datagrams(), l.Close
			r.stats = func() string { s, _ := l.Stats(); return fmt.Sprintf("%+v", s) }
		case "udp":
			p, err := xdp.LoadProgram(addr, 0, serverPort, 1)
			if err != nil {
				return err
			}
			if err := p.Attach(r.ifindex, xdp.Native); err != nil {
				p.Close()
				return err
			}
			c, err := net.ListenUDP("udp4", net.UDPAddrFromAddrPort(netip.AddrPortFrom(addr, serverPort)))
			if err != nil {
				p.Close()
				return err
			}
			rc, _ := c.SyscallConn()
			rc.Control(func(fd uintptr) { unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, udpRcvBuf) })
			r.prog, ml = p, newUDPListener(c)
			closer = p.Close
			r.stats = func() string { c, _ := p.Counters(); return fmt.Sprintf("%+v", c) }
		}
		return nil
	})
	if err != nil {
		testenv.Need(tb, testenv.RequireXDP, false, "cannot set up "+transport+": "+err.Error())
	}
	srv := server.New(server.Options{Handler: handler})
	served := make(chan error, 1)
	go func() { served <- srv.ServeMessages(&counting{MessageListener: ml, r: r}) }()
	tb.Cleanup(func() {
		srv.Close()
		<-served
		closer()
	})
	return r
}

// dropAll attaches an XDP program returning XDP_DROP to iface (in the
// calling thread's namespace), detached at cleanup.
func dropAll(tb testing.TB, iface string) error {
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{
		Type:         ebpf.XDP,
		License:      "MIT",
		Instructions: asm.Instructions{asm.LoadImm(asm.R0, int64(xdp.Drop), asm.DWord), asm.Return()},
	})
	if err != nil {
		return err
	}
	ifi, err := net.InterfaceByName(iface)
	if err != nil {
		prog.Close()
		return err
	}
	l, err := link.AttachXDP(link.XDPOptions{Program: prog, Interface: ifi.Index, Flags: link.XDPDriverMode})
	if err != nil {
		prog.Close()
		return err
	}
	tb.Cleanup(func() { l.Close(); prog.Close() })
	return nil
}

// result is one closed-loop run.
type result struct {
	n, lost     int64
	wall        time.Duration
	cpu, genCPU time.Duration
}

// run injects n requests, at most window outstanding, and waits for their
// answers. It runs on a thread in the server namespace (the injecting
// syscall names the interface by its index there). While the window is
// full it sleeps in a blocking syscall on an eventfd, which frees its Go
// scheduler slot for the server (a NIC takes none) and which the counting
// Release wakes once room for a batch is back. res.cpu is the process's CPU
// time minus the generator thread's, plus the thread's time inside the
// injecting syscalls: the kernel's work of receiving the frames (XDP, and
// the copy into the UMEM or the whole UDP receive path) counts, the
// harness's waiting does not.
func (r *rig) run(n int64) (res result, err error) {
	err = xdptest.InNS(r.v.ServerNS, func() error {
		var self0, self1, thr0, thr1 unix.Rusage
		unix.Getrusage(unix.RUSAGE_SELF, &self0)
		unix.Getrusage(unix.RUSAGE_THREAD, &thr0)
		start := time.Now()
		base := r.served.Load()
		var injected, lost int64
		var inject time.Duration
		buf := make([]byte, 8)
		for {
			done := r.served.Load() - base
			if done+lost >= n {
				break
			}
			if injected-done-lost <= window-batch && injected < n+lost {
				k := min(batch, n+lost-injected)
				t0 := threadCPU()
				if err := r.prog.Inject(r.frame, r.ifindex, uint32(k)); err != nil {
					return err
				}
				inject += threadCPU() - t0
				injected += k
				continue
			}
			// Wait for room for a batch (or the end), then look again.
			r.wakeAt.Store(base + min(injected-lost-(window-batch), n-lost))
			r.waiting.Store(true)
			if r.served.Load() < r.wakeAt.Load() {
				fds := []unix.PollFd{{Fd: int32(r.efd), Events: unix.POLLIN}}
				if k, _ := unix.Poll(fds, int(stallTimeout/time.Millisecond)); k == 0 {
					lost = injected - (r.served.Load() - base) // the outstanding ones are gone
					if lost > n/100+window {
						return fmt.Errorf("%d of %d requests lost: the transport stopped answering; %s", lost, injected, r.stats())
					}
				} else {
					unix.Read(r.efd, buf)
				}
			}
			r.waiting.Store(false)
		}
		res.wall = time.Since(start)
		unix.Getrusage(unix.RUSAGE_SELF, &self1)
		unix.Getrusage(unix.RUSAGE_THREAD, &thr1)
		res.n, res.lost = n, lost
		res.genCPU = inject
		res.cpu = cpuTime(&self1) - cpuTime(&self0) - (cpuTime(&thr1) - cpuTime(&thr0)) + inject
		return nil
	})
	return res, err
}

// threadCPU is the calling thread's CPU time.
func threadCPU() time.Duration {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts)
	return time.Duration(ts.Nano())
}

func cpuTime(r *unix.Rusage) time.Duration {
	return time.Duration(r.Utime.Nano() + r.Stime.Nano())
}

// requestFrame builds the Ethernet frame of one request datagram from the
// client to the server, checksums valid.
func requestFrame(dstMAC, srcMAC net.HardwareAddr, dst, src [4]byte) []byte {
	const ethLen, ipLen, udpLen = 14, 20, 8
	f := make([]byte, ethLen+ipLen+udpLen+len(request))
	copy(f[0:], dstMAC)
	copy(f[6:], srcMAC)
	binary.BigEndian.PutUint16(f[12:], 0x0800)
	ip := f[ethLen : ethLen+ipLen]
	ip[0] = 0x45
	binary.BigEndian.PutUint16(ip[2:], uint16(ipLen+udpLen+len(request)))
	binary.BigEndian.PutUint16(ip[6:], 0x4000) // don't fragment
	ip[8], ip[9] = 64, 17
	copy(ip[12:], src[:])
	copy(ip[16:], dst[:])
	binary.BigEndian.PutUint16(ip[10:], ^fold(sum(ip)))
	u := f[ethLen+ipLen:]
	binary.BigEndian.PutUint16(u[0:], clientPort)
	binary.BigEndian.PutUint16(u[2:], serverPort)
	binary.BigEndian.PutUint16(u[4:], uint16(udpLen+len(request)))
	copy(u[udpLen:], request)
	pseudo := sum(src[:]) + sum(dst[:]) + 17 + uint32(udpLen+len(request))
	c := ^fold(pseudo + sum(u))
	if c == 0 {
		c = 0xffff
	}
	binary.BigEndian.PutUint16(u[6:], c)
	return f
}

func sum(b []byte) uint32 {
	var s uint32
	for i := 0; i+1 < len(b); i += 2 {
		s += uint32(binary.BigEndian.Uint16(b[i:]))
	}
	if len(b)%2 == 1 {
		s += uint32(b[len(b)-1]) << 8
	}
	return s
}

func fold(s uint32) uint16 {
	for s > 0xffff {
		s = s>>16 + s&0xffff
	}
	return uint16(s)
}

// TestRigs checks that the benchmark measures what it claims: every
// injected request is answered, through the AF_XDP socket for "xdp" and
// through the kernel's fallback for "udp".
func TestRigs(t *testing.T) {
	for _, tr := range []string{"xdp", "udp"} {
		t.Run(tr, func(t *testing.T) {
			r := newRig(t, tr)
			const n = 5000
			res, err := r.run(n)
			if err != nil {
				t.Fatal(err)
			}
			if res.lost != 0 {
				t.Fatalf("%d of %d requests lost; %s", res.lost, n, r.stats())
			}
			c, err := r.prog.Counters()
			if err != nil {
				t.Fatal(err)
			}
			switch tr {
			case "xdp":
				if c.Steered < n || c.Fallback != 0 {
					t.Fatalf("counters %+v: want %d steered to the socket", c, n)
				}
			case "udp":
				if c.Fallback < n || c.Steered != 0 {
					t.Fatalf("counters %+v: want %d passed to the kernel", c, n)
				}
			}
		})
	}
}

// BenchmarkDatagram: requests answered per second (1e9 / ns/op) and CPU
// per request of the datagram fast path (transport=xdp) and the same
// handler behind a kernel UDP socket (transport=udp), fed by the
// live-frames generator. Compare with benchstat -col /transport.
func BenchmarkDatagram(b *testing.B) {
	rigs := []*rig{newRig(b, "xdp"), newRig(b, "udp")}
	for _, r := range rigs {
		// Warm up: ARP for the replies, pools, page faults.
		if _, err := r.run(4 * window); err != nil {
			b.Fatal(err)
		}
	}
	// Named case/impl as the suite's report expects: one case, a small
	// GET, and the two transports.
	b.Run("get", func(b *testing.B) {
		for _, r := range rigs {
			benchRig(b, r)
		}
	})
}

// benchRig measures one transport: b.N requests through the closed loop.
func benchRig(b *testing.B, r *rig) {
	b.Run("transport="+r.name, func(b *testing.B) {
		b.SetBytes(int64(len(request)))
		b.ReportAllocs()
		b.ResetTimer()
		res, err := r.run(int64(b.N))
		b.StopTimer()
		if err != nil {
			b.Fatal(err)
		}
		if res.lost > res.n/100 {
			b.Fatalf("%d of %d requests lost; %s", res.lost, res.n, r.stats())
		}
		b.ReportMetric(float64(res.cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
		b.ReportMetric(float64(res.genCPU.Nanoseconds())/float64(b.N), "gen-cpu-ns/op")
		b.ReportMetric(float64(res.lost)/float64(b.N), "lost/op")
		b.ReportMetric(float64(b.N)/res.wall.Seconds(), "req/s")
	})
}
