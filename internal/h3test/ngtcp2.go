package h3test

import (
	"bytes"
	"context"
	"net"
	"os/exec"
	"regexp"
	"testing"
	"time"

	"github.com/simdedge/simdedge/internal/testenv"
)

// RequireNgtcp2 turns a missing ngtcp2 client into a failure (.ci/run
// sets it; make deps installs the package).
const RequireNgtcp2 = "REQUIRE_NGTCP2"

// ngtcp2Timeout bounds one run of the client; past it the test kills it
// by its PID (exec.CommandContext).
const ngtcp2Timeout = 60 * time.Second

// Ngtcp2 is the path of ngtcp2's HTTP/3 example client as Debian ships
// it (ngtcp2-client: gtlsclient, on GnuTLS and nghttp3). It skips
// without it, and fails under REQUIRE_NGTCP2.
func Ngtcp2(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("gtlsclient")
	testenv.Need(t, RequireNgtcp2, err == nil, "gtlsclient not found (apt-get install ngtcp2-client)")
	return p
}

// Ngtcp2Status finds the :status of each response in the client's dump.
var Ngtcp2Status = regexp.MustCompile(`\[:status: (\d+)\]`)

// RunNgtcp2 runs the client bin with opts against addr (host:port) for
// uris, for SNI a.example, and returns its output (the HTTP dump unless
// opts has -q). The command line starts with prefix, if any: "ip netns
// exec NS" runs it in a network namespace (ip execs it in place, so the
// PID the test ends on timeout is the client's).
func RunNgtcp2(t testing.TB, prefix []string, bin, addr string, opts []string, uris ...string) string {
	t.Helper()
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), ngtcp2Timeout)
	defer cancel()
	args := append(append([]string{}, prefix...), bin, "--exit-on-all-streams-close", "--no-quic-dump", "--sni=a.example", "--timeout=20s")
	args = append(append(append(args, opts...), host, port), uris...)
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %v\n%s", args, err, Tail(out.String(), 2000))
	}
	return out.String()
}

// Tail is the last n bytes of s, for failure messages.
func Tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
