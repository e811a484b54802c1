package xdp

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"

	"github.com/simdedge/simdedge/xdp/bpf"
)

// maxQueues bounds the configured RX queue numbers (the XSKMAP is sized
// to the highest one plus one).
const maxQueues = 1024

// Counter indices of the program's per-CPU counters map; they mirror enum
// counter in bpf/steer.c.
const (
	counterSteered = iota
	counterPassed
	counterFallback
	counterDropped
	numCounters
)

// Counters are the program's verdict counts, summed over CPUs.
type Counters struct {
	Steered  uint64 // redirected to an AF_XDP socket
	Passed   uint64 // not for the service: handed to the kernel
	Fallback uint64 // for the service, but no socket on the queue: to the kernel
	Dropped  uint64 // for the service, and the redirect failed
}

// Program is the loaded steering program (bpf/steer.c) with its maps. It
// is configured at load: the verifier sees the address and ports as
// constants.
type Program struct {
	objs bpf.SteerObjects
	link link.Link
}

// LoadProgram loads the steering program for addr (the zero Addr: any
// address) and the two ports (0: not steered), with room for sockets on
// queues 0..queues-1.
func LoadProgram(addr netip.Addr, tcpPort, udpPort, queues int) (*Program, error) {
	if addr.IsValid() && !addr.Is4() || tcpPort < 0 || tcpPort > 65535 || udpPort < 0 || udpPort > 65535 ||
		queues < 1 || queues > maxQueues {
		return nil, fmt.Errorf("%w: program: IPv4 address, ports 0..65535, 1..%d queues", ErrConfig, maxQueues)
	}
	spec, err := bpf.LoadSteer()
	if err != nil {
		return nil, fmt.Errorf("xdp: embedded program: %w", err)
	}
	var a uint32 // network byte order in memory, as the packet holds it
	if addr.IsValid() {
		b := addr.As4()
		a = binary.NativeEndian.Uint32(b[:])
	}
	for name, v := range map[string]any{
		bpf.SteerVarCfgAddr:    a,
		bpf.SteerVarCfgTcpPort: netPort(tcpPort),
		bpf.SteerVarCfgUdpPort: netPort(udpPort),
	} {
		if err := spec.Variables[name].Set(v); err != nil {
			return nil, fmt.Errorf("xdp: program: set %s: %w", name, err)
		}
	}
	spec.Maps[bpf.SteerMapXsks].MaxEntries = uint32(queues)
	p := &Program{}
	if err := spec.LoadAndAssign(&p.objs, nil); err != nil {
		return nil, loadErr("load program", err)
	}
	return p, nil
}

// netPort returns port as a uint16 whose memory holds it in network byte
// order.
func netPort(port int) uint16 {
	return binary.NativeEndian.Uint16([]byte{byte(port >> 8), byte(port)})
}

// loadErr explains a failed BPF syscall.
func loadErr(op string, err error) error {
	switch {
	case errors.Is(err, unix.EPERM), errors.Is(err, unix.EACCES):
		return fmt.Errorf("%w: %s: %w", ErrPermission, op, err)
	case errors.Is(err, unix.ENOSYS), errors.Is(err, ebpf.ErrNotSupported):
		return fmt.Errorf("%w: %s: %w", ErrKernel, op, err)
	}
	return fmt.Errorf("xdp: %s: %w", op, err)
}

// Attach links the program to the interface through a bpf_link, so it is
// detached when the link is closed or the process dies.
func (p *Program) Attach(ifindex int, mode Mode) error {
	if p.link != nil {
		return fmt.Errorf("%w: program already attached", ErrConfig)
	}
	flags := link.XDPDriverMode
	if mode == Generic {
		flags = link.XDPGenericMode
	}
	l, err := link.AttachXDP(link.XDPOptions{Program: p.objs.Steer, Interface: ifindex, Flags: flags})
	if err != nil {
		if mode != Generic && (errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, ebpf.ErrNotSupported)) {
			return fmt.Errorf("%w: %w", ErrDriver, err)
		}
		if errors.Is(err, unix.EBUSY) || errors.Is(err, unix.EEXIST) {
			return fmt.Errorf("xdp: another XDP program is attached to the interface: %w", err)
		}
		return loadErr("attach", err)
	}
	p.link = l
	return nil
}

// Register puts an AF_XDP socket in the program's map for queue.
func (p *Program) Register(queue, fd int) error {
	if err := p.objs.Xsks.Put(uint32(queue), uint32(fd)); err != nil {
		return fmt.Errorf("xdp: register socket for queue %d: %w", queue, err)
	}
	return nil
}

// Counters sums the per-CPU counters.
func (p *Program) Counters() (Counters, error) {
	var c Counters
	var per []uint64
	for i := uint32(0); i < numCounters; i++ {
		if err := p.objs.Counters.Lookup(i, &per); err != nil {
			return c, fmt.Errorf("xdp: counters: %w", err)
		}
		var sum uint64
		for _, v := range per {
			sum += v
		}
		switch i {
		case counterSteered:
			c.Steered = sum
		case counterPassed:
			c.Passed = sum
		case counterFallback:
			c.Fallback = sum
		case counterDropped:
			c.Dropped = sum
		}
	}
	return c, nil
}

// Action is an XDP verdict.
type Action uint32

// The verdicts the program returns (enum xdp_action in linux/bpf.h).
const (
	Aborted Action = iota
	Drop
	Pass
	TX
	Redirect
)

func (a Action) String() string {
	switch a {
	case Aborted:
		return "aborted"
	case Drop:
		return "drop"
	case Pass:
		return "pass"
	case TX:
		return "tx"
	case Redirect:
		return "redirect"
	}
	return fmt.Sprintf("action(%d)", uint32(a))
}

// Test runs the program once on frame in the kernel (BPF_PROG_TEST_RUN),
// without a device, and returns its verdict: what it would do with the
// frame on the wire. With no device, a redirect reports Redirect when a
// socket is registered for queue 0 and Pass otherwise.
func (p *Program) Test(frame []byte) (Action, error) {
	ret, err := p.objs.Steer.Run(&ebpf.RunOptions{Data: frame})
	if err != nil {
		return 0, fmt.Errorf("xdp: test run: %w", err)
	}
	return Action(ret), nil
}

// xdpMD is the kernel's struct xdp_md, the context of a test run.
type xdpMD struct {
	Data, DataEnd, DataMeta, IngressIfindex, RxQueueIndex, EgressIfindex uint32
}

// Inject runs the program on frame repeat times as if the interface
// ifindex had received it on queue 0 (BPF_PROG_TEST_RUN with
// BPF_F_TEST_XDP_LIVE_FRAMES): verdicts take effect, so redirected frames
// reach the AF_XDP socket and passed ones the kernel's stack. It models a
// NIC delivering raw frames, for benchmarks; the program must be attached
// in native mode to ifindex (the kernel needs the queue's XDP state).
func (p *Program) Inject(frame []byte, ifindex int, repeat uint32) error {
	_, err := p.objs.Steer.Run(&ebpf.RunOptions{
		Data:    frame,
		Context: xdpMD{DataEnd: uint32(len(frame)), IngressIfindex: uint32(ifindex)},
		Repeat:  repeat,
		Flags:   unix.BPF_F_TEST_XDP_LIVE_FRAMES,
	})
	if err != nil {
		return fmt.Errorf("xdp: inject: %w", err)
	}
	return nil
}

// Close detaches the program (if attached) and releases it and its maps.
func (p *Program) Close() error {
	var err error
	if p.link != nil {
		err = p.link.Close()
		p.link = nil
	}
	return errors.Join(err, p.objs.Close())
}
