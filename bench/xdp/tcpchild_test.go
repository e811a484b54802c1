package xdp

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/simdedge/simdedge/xdp/xdptest"
)

// The generator runs as a process of its own: this test binary again, in
// the client namespace. So the server's process holds nothing of the
// generator's (no goroutine, no poller wake-ups, no GC of its work), and
// its CPU time is the server's.
//
// The protocol on the child's stdin and stdout: the child opens its
// connections, warms them up and prints "ready"; the parent takes its CPU
// time and writes "go"; the child sends its requests and prints "result"
// with the wall time, its own CPU time and its time inside send(2), in
// nanoseconds; any failure is a line "error: ...".

// Environment of the child.
const (
	childEnv   = "TCPGEN_CHILD"   // set: run as the generator
	childIf    = "TCPGEN_IFINDEX" // the client veth's index
	childMACs  = "TCPGEN_MACS"    // source and destination MAC, comma-separated
	childDst   = "TCPGEN_DST"     // server address:port
	childConns = "TCPGEN_NCONNS"
	childN     = "TCPGEN_N"
)

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Exit(genChild())
	}
	os.Exit(m.Run())
}

// genChild is the generator process.
func genChild() int {
	fail := func(err error) int { fmt.Println("error:", err); return 1 }
	runtime.LockOSThread() // send(2)'s time is read from this thread's clock
	ifindex, err1 := strconv.Atoi(os.Getenv(childIf))
	conns, err2 := strconv.Atoi(os.Getenv(childConns))
	n, err3 := strconv.Atoi(os.Getenv(childN))
	macs := strings.Split(os.Getenv(childMACs), ",")
	dst, err4 := net.ResolveTCPAddr("tcp4", os.Getenv(childDst))
	if err := errors.Join(err1, err2, err3, err4); err != nil || len(macs) != 2 {
		return fail(fmt.Errorf("bad environment: %v", err))
	}
	src, err1 := net.ParseMAC(macs[0])
	to, err2 := net.ParseMAC(macs[1])
	if err := errors.Join(err1, err2); err != nil {
		return fail(err)
	}
	g, err := newTCPGen(ifindex, [6]byte(src), [6]byte(to), genIP, [4]byte(dst.IP.To4()), uint16(dst.Port), conns, request)
	if err != nil {
		return fail(err)
	}
	defer g.Close()
	if err := g.Open(genTimeout); err != nil {
		return fail(err)
	}
	if err := g.Run(2*conns, genTimeout); err != nil {
		return fail(err)
	}
	fmt.Println("ready")
	if s, _ := bufio.NewReader(os.Stdin).ReadString('\n'); strings.TrimSpace(s) != "go" {
		return fail(errors.New("no go from the parent"))
	}
	var ru0, ru1 unix.Rusage
	unix.Getrusage(unix.RUSAGE_SELF, &ru0)
	send0 := g.sendCPU
	start := time.Now()
	if err := g.Run(n, genTimeout); err != nil {
		return fail(err)
	}
	wall := time.Since(start)
	unix.Getrusage(unix.RUSAGE_SELF, &ru1)
	fmt.Println("result", wall.Nanoseconds(), (cpuTime(&ru1) - cpuTime(&ru0)).Nanoseconds(), (g.sendCPU - send0).Nanoseconds())
	return 0
}

// run has a generator process send n requests over conns connections to
// port and measures. cpu is this process's CPU time while the child sent
// (the server: nothing else runs here) plus the child's time inside
// send(2): the kernel's work of receiving each request (veth, XDP, then
// the AF_XDP copy or the whole kernel TCP receive path) runs inside that
// syscall, and a NIC would bill it to the server's CPU.
func (r *tcpRig) run(port uint16, conns, n int) (tcpResult, error) {
	var res tcpResult
	cmd := exec.Command("ip", "netns", "exec", r.v.ClientNS, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=1",
		childIf+"="+strconv.Itoa(r.clientIfindex),
		childMACs+"="+net.HardwareAddr(r.cliMAC[:]).String()+","+net.HardwareAddr(r.srvMAC[:]).String(),
		childDst+"="+xdptest.Addr(r.v.ServerIP)+":"+strconv.Itoa(int(port)),
		childConns+"="+strconv.Itoa(conns), childN+"="+strconv.Itoa(n))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return res, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return res, err
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return res, err
	}
	defer func() {
		stdin.Close()
		// The child ends by itself: after its result, or when a wait
		// of genTimeout fails. Kill is for a stuck one only.
		t := time.AfterFunc(4*genTimeout, func() { cmd.Process.Kill() })
		cmd.Wait()
		t.Stop()
	}()
	lines := bufio.NewScanner(stdout)
	line := func() string {
		if lines.Scan() {
			return lines.Text()
		}
		return "error: the generator exited: " + strings.TrimSpace(stderr.String())
	}
	fail := func(l string) (tcpResult, error) {
		return res, fmt.Errorf("port %d: generator: %s; stack %+v", port, strings.TrimPrefix(l, "error: "), r.st.Stats())
	}
	if l := line(); l != "ready" {
		return fail(l)
	}
	var ru0, ru1 unix.Rusage
	unix.Getrusage(unix.RUSAGE_SELF, &ru0)
	if _, err := stdin.Write([]byte("go\n")); err != nil {
		return res, err
	}
	l := line()
	unix.Getrusage(unix.RUSAGE_SELF, &ru1)
	var wall, gen, send int64
	if _, err := fmt.Sscanf(l, "result %d %d %d", &wall, &gen, &send); err != nil {
		return fail(l)
	}
	res.wall, res.genCPU, res.sendCPU = time.Duration(wall), time.Duration(gen), time.Duration(send)
	res.cpu = cpuTime(&ru1) - cpuTime(&ru0) + res.sendCPU
	return res, nil
}
