package netstack_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/simdedge/simdedge/internal/testenv"
	"github.com/simdedge/simdedge/xdp/xdptest"
)

// A veth pair between two network namespaces this test creates: the
// server's end ("s") and the client's end ("c"), named after the process
// and a counter so that concurrent runs never collide. Addresses come from
// the benchmarking range 198.18.0.0/15.

var (
	vethServerAddr = netip.MustParseAddr("198.18.0.1")
	vethClientAddr = netip.MustParseAddr("198.18.0.2")
)

// cmdTimeout bounds every ip/ethtool/curl command.
const cmdTimeout = 20 * time.Second

var vethSeq atomic.Int32

type veth struct {
	serverNS, clientNS string // namespace names (under /run/netns)
	serverIf, clientIf string
}

// run runs a command with a bounded time and returns its combined output.
func run(name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return string(out), nil
}

// newVeth builds the namespaces and the pair, removed at cleanup even if
// the test fails. It skips (fails under REQUIRE_NETNS) when namespaces
// cannot be made. generic: the server side will run XDP in generic mode,
// which also needs TSO off on the client (FACTS.md).
func newVeth(t testing.TB, generic bool) *veth {
	t.Helper()
	testenv.NeedRoot(t)
	ip := testenv.Command(t, "ip")
	ethtool := testenv.Command(t, "ethtool")
	id := fmt.Sprintf("nsk%d%c", os.Getpid(), 'a'+vethSeq.Add(1)%26)
	v := &veth{serverNS: id + "s", clientNS: id + "c", serverIf: id + "s", clientIf: id + "c"}
	_, err := run(ip, "netns", "add", v.serverNS)
	testenv.Need(t, testenv.RequireNetNS, err == nil, fmt.Sprintf("cannot create a network namespace: %v", err))
	t.Cleanup(func() { run(ip, "netns", "del", v.serverNS) })
	if _, err := run(ip, "netns", "add", v.clientNS); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { run(ip, "netns", "del", v.clientNS) }) // takes the veth pair with it
	steps := [][]string{
		{ip, "link", "add", v.serverIf, "netns", v.serverNS, "type", "veth", "peer", "name", v.clientIf, "netns", v.clientNS},
		{ip, "-n", v.serverNS, "addr", "add", vethServerAddr.String() + "/24", "dev", v.serverIf},
		{ip, "-n", v.clientNS, "addr", "add", vethClientAddr.String() + "/24", "dev", v.clientIf},
		{ip, "-n", v.serverNS, "link", "set", "lo", "up"},
		{ip, "-n", v.clientNS, "link", "set", "lo", "up"},
		{ip, "-n", v.serverNS, "link", "set", v.serverIf, "up"},
		{ip, "-n", v.clientNS, "link", "set", v.clientIf, "up"},
		// The client's kernel would leave TCP checksums to an offload
		// that never happens on veth; gVisor verifies them and would
		// drop every segment (FACTS.md).
		{ip, "netns", "exec", v.clientNS, ethtool, "-K", v.clientIf, "tx", "off"},
	}
	if generic {
		steps = append(steps, []string{ip, "netns", "exec", v.clientNS, ethtool, "-K", v.clientIf, "tso", "off", "gso", "off"})
	}
	for _, s := range steps {
		if _, err := run(s[0], s[1:]...); err != nil {
			t.Fatal(err)
		}
	}
	return v
}

// dial connects from the client's namespace.
func (v *veth) dial(ctx context.Context, addr string) (net.Conn, error) {
	var c net.Conn
	err := xdptest.InNS(v.clientNS, func() error {
		var err error
		c, err = (&net.Dialer{}).DialContext(ctx, "tcp", addr)
		return err
	})
	return c, err
}

// curl runs curl in the client's namespace.
func (v *veth) curl(t testing.TB, args ...string) (string, error) {
	t.Helper()
	curl := testenv.Command(t, "curl")
	return run("ip", append([]string{"netns", "exec", v.clientNS, curl, "-sS", "--max-time", "15"}, args...)...)
}
