package xdp

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/simdedge/simdedge/internal/testenv"
)

// A veth pair between two network namespaces the test creates, named after
// the process and a counter ("sx<pid><n>") so concurrent runs never
// collide, with addresses from the benchmarking range 198.18.0.0/15. Both
// namespaces (and with them the pair) are deleted at cleanup, even when
// the test fails.

// cmdTimeout bounds every ip/ethtool command.
const cmdTimeout = 20 * time.Second

var nsSeq atomic.Int32

type vethPair struct {
	serverNS, clientNS string
	serverIf, clientIf string
	serverIP, clientIP [4]byte
}

func run(name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return string(out), nil
}

func newVethPair(t testing.TB) *vethPair {
	t.Helper()
	testenv.NeedRoot(t)
	ip := testenv.Command(t, "ip")
	ethtool := testenv.Command(t, "ethtool")
	id := fmt.Sprintf("sx%d%c", os.Getpid()%100000, 'a'+nsSeq.Add(1)%26)
	v := &vethPair{serverNS: id + "s", clientNS: id + "c", serverIf: id + "s", clientIf: id + "c",
		serverIP: testServerIP, clientIP: testClientIP}
	_, err := run(ip, "netns", "add", v.serverNS)
	testenv.Need(t, testenv.RequireNetNS, err == nil, fmt.Sprintf("cannot create a network namespace: %v", err))
	t.Cleanup(func() { run(ip, "netns", "del", v.serverNS) })
	if _, err := run(ip, "netns", "add", v.clientNS); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { run(ip, "netns", "del", v.clientNS) })
	sip, cip := fmt.Sprintf("%d.%d.%d.%d/24", v.serverIP[0], v.serverIP[1], v.serverIP[2], v.serverIP[3]),
		fmt.Sprintf("%d.%d.%d.%d/24", v.clientIP[0], v.clientIP[1], v.clientIP[2], v.clientIP[3])
	for _, s := range [][]string{
		{ip, "link", "add", v.serverIf, "netns", v.serverNS, "type", "veth", "peer", "name", v.clientIf, "netns", v.clientNS},
		{ip, "-n", v.serverNS, "addr", "add", sip, "dev", v.serverIf},
		{ip, "-n", v.clientNS, "addr", "add", cip, "dev", v.clientIf},
		{ip, "-n", v.serverNS, "link", "set", "lo", "up"},
		{ip, "-n", v.clientNS, "link", "set", "lo", "up"},
		{ip, "-n", v.serverNS, "link", "set", v.serverIf, "up"},
		{ip, "-n", v.clientNS, "link", "set", v.clientIf, "up"},
		// veth leaves checksums to an offload that never happens; the
		// AF_XDP side verifies them, so the client must compute them.
		{ip, "netns", "exec", v.clientNS, ethtool, "-K", v.clientIf, "tx", "off"},
	} {
		if _, err := run(s[0], s[1:]...); err != nil {
			t.Fatal(err)
		}
	}
	return v
}

// inNS runs fn on a thread switched into namespace ns: sockets, links and
// interface lookups fn makes belong to ns, whichever thread uses them
// later.
func inNS(ns string, fn func() error) error {
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
