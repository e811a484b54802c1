// Package xdptest builds what the AF_XDP tests run on: two network
// namespaces joined by a veth pair, with addresses from the benchmarking
// range 198.18.0.0/15, removed at cleanup even when the test fails.
package xdptest

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/simdedge/simdedge/internal/testenv"
)

// CmdTimeout bounds every command Run starts.
const CmdTimeout = 20 * time.Second

// The addresses of the two ends.
var (
	ServerIP = [4]byte{198, 18, 0, 1}
	ClientIP = [4]byte{198, 18, 0, 2}
)

var seq atomic.Int32

// Veth is a veth pair between a server and a client namespace. Names are
// "sx<pid><letter>" plus "s" or "c", so concurrent runs never collide.
type Veth struct {
	ServerNS, ClientNS string // namespace names (under /run/netns)
	ServerIf, ClientIf string
	ServerIP, ClientIP [4]byte
}

// Addr formats an address of the pair.
func Addr(ip [4]byte) string { return fmt.Sprintf("%d.%d.%d.%d", ip[0], ip[1], ip[2], ip[3]) }

// Run runs a command, bounded by CmdTimeout, and returns its combined
// output.
func Run(name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), CmdTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return string(out), nil
}

// NewVeth creates the namespaces and the pair, up and addressed, with TX
// checksum offload off on the client end: veth leaves checksums to an
// offload that never happens, and the AF_XDP side verifies them. It skips
// (fails under REQUIRE_ROOT/REQUIRE_NETNS) without root or namespaces.
func NewVeth(t testing.TB) *Veth {
	t.Helper()
	return NewVethQueues(t, 1)
}

// NewVethQueues is NewVeth with queues RX and TX queues on each end (veth
// spreads flows over them by hash).
func NewVethQueues(t testing.TB, queues int) *Veth {
	t.Helper()
	testenv.NeedRoot(t)
	ip := testenv.Command(t, "ip")
	ethtool := testenv.Command(t, "ethtool")
	sweepOnce.Do(func() { sweepStale(ip) })
	id := fmt.Sprintf("sx%d%c", os.Getpid()%100000, 'a'+seq.Add(1)%26)
	v := &Veth{ServerNS: id + "s", ClientNS: id + "c", ServerIf: id + "s", ClientIf: id + "c",
		ServerIP: ServerIP, ClientIP: ClientIP}
	_, err := Run(ip, "netns", "add", v.ServerNS)
	testenv.Need(t, testenv.RequireNetNS, err == nil, fmt.Sprintf("cannot create a network namespace: %v", err))
	t.Cleanup(func() { Run(ip, "netns", "del", v.ServerNS) })
	if _, err := Run(ip, "netns", "add", v.ClientNS); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { Run(ip, "netns", "del", v.ClientNS) })
	q := strconv.Itoa(queues)
	for _, s := range [][]string{
		{ip, "link", "add", v.ServerIf, "netns", v.ServerNS, "numtxqueues", q, "numrxqueues", q, "type", "veth",
			"peer", "name", v.ClientIf, "netns", v.ClientNS, "numtxqueues", q, "numrxqueues", q},
		{ip, "-n", v.ServerNS, "addr", "add", Addr(v.ServerIP) + "/24", "dev", v.ServerIf},
		{ip, "-n", v.ClientNS, "addr", "add", Addr(v.ClientIP) + "/24", "dev", v.ClientIf},
		{ip, "-n", v.ServerNS, "link", "set", "lo", "up"},
		{ip, "-n", v.ClientNS, "link", "set", "lo", "up"},
		{ip, "-n", v.ServerNS, "link", "set", v.ServerIf, "up"},
		{ip, "-n", v.ClientNS, "link", "set", v.ClientIf, "up"},
		{ip, "netns", "exec", v.ClientNS, ethtool, "-K", v.ClientIf, "tx", "off"},
	} {
		if _, err := Run(s[0], s[1:]...); err != nil {
			t.Fatal(err)
		}
	}
	return v
}

// InNS runs fn on a thread switched into namespace ns: sockets, links and
// interface lookups fn makes belong to ns, whichever thread uses them
// later.
func InNS(ns string, fn func() error) error {
	runtime.LockOSThread()
	orig, err := os.Open("/proc/thread-self/ns/net")
	if err != nil {
		runtime.UnlockOSThread()
		return err
	}
	defer orig.Close()
	target, err := os.Open("/run/netns/" + ns)
	if err != nil {
		runtime.UnlockOSThread()
		return err
	}
	defer target.Close()
	if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("setns %s: %w", ns, err)
	}
	ferr := fn()
	if err := unix.Setns(int(orig.Fd()), unix.CLONE_NEWNET); err != nil {
		// The thread stays locked and dies with this goroutine rather
		// than serve others in the wrong namespace.
		return fmt.Errorf("setns back: %w", err)
	}
	runtime.UnlockOSThread()
	return ferr
}

// Ping sends ICMP echo requests from the client namespace to addr through
// a raw socket (test images may lack a ping binary) and returns nil at the
// first reply; it tries 5 times, a second each.
func (v *Veth) Ping(addr string) error {
	var c net.PacketConn
	if err := InNS(v.ClientNS, func() (err error) { c, err = net.ListenPacket("ip4:icmp", "0.0.0.0"); return err }); err != nil {
		return err
	}
	defer c.Close()
	dst := &net.IPAddr{IP: net.ParseIP(addr)}
	const id = 0x5358
	echo := []byte{8, 0, 0, 0, id >> 8, id & 0xff, 0, 1, 'p', 'i', 'n', 'g'} // type 8: echo request
	sum := uint32(0)
	for i := 0; i < len(echo); i += 2 {
		sum += uint32(echo[i])<<8 | uint32(echo[i+1])
	}
	sum = sum>>16 + sum&0xffff
	sum += sum >> 16
	binary.BigEndian.PutUint16(echo[2:], ^uint16(sum))
	buf := make([]byte, 1500)
	for range 5 {
		if _, err := c.WriteTo(echo, dst); err != nil {
			return err
		}
		c.SetReadDeadline(time.Now().Add(time.Second))
		for {
			n, from, err := c.ReadFrom(buf)
			if err != nil {
				break // timed out: send again
			}
			// Type 0: echo reply, with our identifier.
			if from.String() == addr && n >= 8 && buf[0] == 0 && buf[4] == id>>8 && buf[5] == id&0xff {
				return nil
			}
		}
	}
	return errors.New("xdptest: no echo reply from " + addr)
}
