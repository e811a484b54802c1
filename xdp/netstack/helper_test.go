package netstack_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/simdedge/simdedge/internal/testenv"
	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/xdp"
	"github.com/simdedge/simdedge/xdp/netstack"
)

// The veth tests and benchmarks run the server in the server's namespace
// as a child process: this test binary again, in helper mode. So the
// server owns a process (its CPU time is the server's, for the benchmark),
// and a crash cannot leave the XDP program attached (bpf_link).

const (
	helperEnv   = "NETSTACK_TEST_HELPER"
	helperTCP   = "NETSTACK_TEST_TCP"   // kernel TCP address to serve, optional
	helperXDPIf = "NETSTACK_TEST_XDPIF" // interface for AF_XDP + netstack, optional
	helperXDPAt = "NETSTACK_TEST_XDPAT" // address:port served by netstack
	helperMode  = "NETSTACK_TEST_MODE"  // native or generic
	// helperStats names a file the helper writes the stack's and the
	// AF_XDP listener's counters to when it stops (diagnostics for the
	// benchmark: how many ACKs were merged, frames sent).
	helperStats  = "NETSTACK_TEST_STATSFILE"
	helperReady  = "ready"
	helperNoXDP  = "unavailable:"
	helperFailed = "error:"
	// shutdownWait bounds the helper's graceful shutdown.
	shutdownWait = 5 * time.Second
)

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) != "" {
		os.Exit(runHelper())
	}
	os.Exit(m.Run())
}

// handler is the helper's: "/raw" echoes the body, "/" answers a short
// static body (the benchmark's request), anything else method, target and
// body length.
var handler = server.HandlerFunc(func(w *server.ResponseWriter, r *server.Request) {
	switch string(r.Target()) {
	case "/":
		w.WriteString("ok\n")
		return
	}
	b, err := r.BodyBytes()
	if err != nil {
		w.WriteHeader(413)
		return
	}
	if string(r.Target()) == "/raw" {
		w.Write(b)
		return
	}
	fmt.Fprintf(w, "%s %s %d", r.Method(), r.Target(), len(b))
})

// runHelper serves until SIGTERM or until its stdin closes (the test
// process died), then shuts down in order: server, stack, AF_XDP.
func runHelper() int {
	srv := server.New(server.Options{Handler: handler})
	var closers []func() error
	fail := func(prefix string, err error) int {
		fmt.Printf("%s %v\n", prefix, err)
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
		return 1
	}
	serve := func(l server.StreamListener) { go srv.ServeStream(l) }
	if a := os.Getenv(helperTCP); a != "" {
		l, err := net.Listen("tcp", a)
		if err != nil {
			return fail(helperFailed, err)
		}
		serve(server.TCPListener(l))
	}
	if ifName := os.Getenv(helperXDPIf); ifName != "" {
		ap, err := netip.ParseAddrPort(os.Getenv(helperXDPAt))
		if err != nil {
			return fail(helperFailed, err)
		}
		xl, err := xdp.Listen(xdp.Config{
			Interface: ifName, Address: ap.Addr(), TCPPort: int(ap.Port()), Mode: xdp.Mode(os.Getenv(helperMode)),
		})
		if err != nil {
			if errors.Is(err, xdp.ErrKernel) || errors.Is(err, xdp.ErrPermission) || errors.Is(err, xdp.ErrDriver) {
				return fail(helperNoXDP, err)
			}
			return fail(helperFailed, err)
		}
		closers = append(closers, xl.Close)
		st, err := netstack.New(netstack.Config{Address: ap.Addr(), Port: ap.Port()}, xl)
		if err != nil {
			return fail(helperFailed, err)
		}
		closers = append(closers, st.Close)
		xl.HandleStream(st.Deliver)
		serve(st.Listener())
		if f := os.Getenv(helperStats); f != "" {
			defer func() {
				xs, _ := xl.Stats()
				os.WriteFile(f, fmt.Appendf(nil, "stack %+v\nxdp %+v\n", st.Stats(), xs), 0o644)
			}()
		}
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM)
	stdinGone := make(chan struct{})
	go func() { io.Copy(io.Discard, os.Stdin); close(stdinGone) }()
	fmt.Println(helperReady)
	select {
	case <-sig:
	case <-stdinGone:
	}
	ctx, cancel := context.WithTimeout(context.Background(), shutdownWait)
	defer cancel()
	code := 0
	if err := srv.Shutdown(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "shutdown:", err)
		code = 1
	}
	for i := len(closers) - 1; i >= 0; i-- {
		if err := closers[i](); err != nil {
			fmt.Fprintln(os.Stderr, "close:", err)
			code = 1
		}
	}
	return code
}

// helperOpts says what a helper serves.
type helperOpts struct {
	tcp     string // kernel TCP address, "" for none
	xdpAt   string // netstack address:port, "" for none
	generic bool
	cpu     int // CPU to pin the helper to, -1 for none
}

// startHelper runs the server helper in v's server namespace and waits
// until it serves. It returns the helper's PID. The helper is stopped with
// SIGTERM at cleanup, and must exit cleanly.
func startHelper(t testing.TB, v *veth, o helperOpts) int {
	t.Helper()
	args := []string{"netns", "exec", v.serverNS}
	if o.cpu >= 0 {
		args = append(args, testenv.Command(t, "taskset"), "-c", strconv.Itoa(o.cpu))
	}
	args = append(args, os.Args[0], "-test.run=^$")
	cmd := exec.Command("ip", args...)
	mode := xdp.Native
	if o.generic {
		mode = xdp.Generic
	}
	cmd.Env = append(os.Environ(), helperEnv+"=1", helperTCP+"="+o.tcp, helperMode+"="+string(mode))
	if o.xdpAt != "" {
		cmd.Env = append(cmd.Env, helperXDPIf+"="+v.serverIf, helperXDPAt+"="+o.xdpAt)
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() {
		// Wait closes stdout, so it runs after the ready line is read
		// (or after the helper died without one).
		exited <- cmd.Wait()
	}()
	stop := func() error {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-exited:
			return err
		case <-time.After(2 * shutdownWait):
			cmd.Process.Kill()
			<-exited
			return errors.New("helper did not exit after SIGTERM")
		}
	}
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(stdout).ReadString('\n')
		line <- strings.TrimSpace(s)
		io.Copy(io.Discard, stdout)
	}()
	var got string
	select {
	case got = <-line:
	case <-time.After(cmdTimeout):
		stop()
		t.Fatal("helper did not start in time")
	}
	switch {
	case got == helperReady:
	case strings.HasPrefix(got, helperNoXDP):
		stop()
		stdin.Close()
		testenv.Need(t, testenv.RequireXDP, false, "AF_XDP is not available: "+strings.TrimPrefix(got, helperNoXDP))
	default:
		stop()
		t.Fatalf("helper failed to start: %q %s", got, stderr.String())
	}
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Errorf("helper exit: %v %s", err, stderr.String())
		}
		stdin.Close()
	})
	return cmd.Process.Pid
}
