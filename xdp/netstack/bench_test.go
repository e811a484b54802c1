package netstack_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// BenchmarkVethKeepAlive compares TCP on the userspace stack (AF_XDP in
// native mode, gVisor, the server core) with kernel TCP (the same server
// core and handler) on the same veth pair: keep-alive "GET /" requests
// answered with 3 bytes, benchConns connections at once, from a Go client
// in the client namespace. Packets are built by the kernel on the client
// side (veth), not by a NIC: FACTS.md found that AF_XDP gains nothing over
// the kernel for kernel-built packets, so this measures the userspace TCP
// stack's cost, not the XDP fast path's.
//
// The server is one helper process serving both transports, pinned to CPU
// 0; run the benchmark pinned to CPU 1 (bench/netstack/run.sh does):
//
//	taskset -c 1 go test -run '^$' -bench VethKeepAlive -count 10 ./xdp/netstack/
//
// Metrics: ns/op is wall time per request (1e9/ns/op is requests per
// second); cpu-ns/op is the server process's CPU time per request
// (utime+stime from /proc, all threads, including the kernel work done in
// its system calls and the softirq work the kernel happened to bill to
// it); client-cpu-ns/op is the same for the benchmark process, which runs
// the client side's kernel TCP and, with native XDP on veth, much of the
// XDP program's work; req/s is spelled out too.
func BenchmarkVethKeepAlive(b *testing.B) {
	v := newVeth(b, false)
	kernel := vethServerAddr.String() + ":8080"
	gvisor := vethServerAddr.String() + ":8081"
	pid := startHelper(b, v, helperOpts{tcp: kernel, xdpAt: gvisor, cpu: 0})
	// Sub-benchmarks are named key=value so that benchstat compares them
	// side by side: benchstat -col /transport.
	for _, tr := range []struct{ name, addr string }{{"transport=kernel", kernel}, {"transport=gvisor", gvisor}} {
		b.Run(tr.name, func(b *testing.B) { benchKeepAlive(b, v, pid, tr.addr) })
	}
}

// benchConns is the number of concurrent keep-alive connections
// (NETSTACK_BENCH_CONNS overrides it, to study latency against load).
var benchConns = 16

func init() {
	if n, err := strconv.Atoi(os.Getenv("NETSTACK_BENCH_CONNS")); err == nil && n > 0 {
		benchConns = n
	}
}

var benchRequest = []byte("GET / HTTP/1.1\r\nHost: bench\r\n\r\n")

func benchKeepAlive(b *testing.B, v *veth, pid int, addr string) {
	conns := make([]net.Conn, benchConns)
	respLen := 0
	for i := range conns {
		ctx, cancel := context.WithTimeout(context.Background(), vethTimeout)
		c, err := v.dial(ctx, addr)
		cancel()
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		conns[i] = c
		n, err := warmUp(c)
		if err != nil {
			b.Fatal(err)
		}
		respLen = n
	}
	var left atomic.Int64
	left.Store(int64(b.N))
	var wg sync.WaitGroup
	errs := make(chan error, len(conns))
	cpu0, self0 := procCPU(b, pid), selfCPU(b)
	b.ResetTimer()
	start := time.Now()
	for _, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, respLen)
			for left.Add(-1) >= 0 {
				c.SetDeadline(time.Now().Add(vethTimeout))
				if _, err := c.Write(benchRequest); err != nil {
					errs <- err
					return
				}
				if _, err := io.ReadFull(c, buf); err != nil {
					errs <- err
					return
				}
				if !bytes.HasSuffix(buf, []byte("ok\n")) {
					errs <- fmt.Errorf("unexpected response %q", buf)
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	cpu, self := procCPU(b, pid)-cpu0, selfCPU(b)-self0
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(self.Nanoseconds())/float64(b.N), "client-cpu-ns/op")
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "req/s")
}

// warmUp sends one request and reads its response by its framing,
// returning the response's length: every later response has the same
// length (a fixed-width Date and a 3-byte body).
func warmUp(c net.Conn) (int, error) {
	c.SetDeadline(time.Now().Add(vethTimeout))
	if _, err := c.Write(benchRequest); err != nil {
		return 0, err
	}
	var got []byte
	buf := make([]byte, 4096)
	for {
		n, err := c.Read(buf)
		if err != nil {
			return 0, err
		}
		got = append(got, buf[:n]...)
		head, body, ok := bytes.Cut(got, []byte("\r\n\r\n"))
		if !ok {
			continue
		}
		const cl = "\r\nContent-Length: "
		i := bytes.Index(head, []byte(cl))
		if i < 0 {
			return 0, fmt.Errorf("no Content-Length in %q", head)
		}
		rest := head[i+len(cl):]
		if j := bytes.IndexByte(rest, '\r'); j >= 0 {
			rest = rest[:j]
		}
		n, err = strconv.Atoi(string(rest))
		if err != nil {
			return 0, err
		}
		if len(body) >= n {
			return len(head) + 4 + n, nil
		}
	}
}

// clockTick is USER_HZ, the unit of utime and stime in /proc (100 on
// every Linux architecture Go supports).
const clockTick = 10 * time.Millisecond

// procCPU is the user+system CPU time of process pid, all threads.
func procCPU(b *testing.B, pid int) time.Duration {
	s, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		b.Fatal(err)
	}
	// Fields after the command name, which is in parentheses and may
	// hold spaces: state is field 3, utime 14, stime 15.
	f := strings.Fields(string(s[bytes.LastIndexByte(s, ')')+1:]))
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		b.Fatalf("cannot parse /proc/%d/stat", pid)
	}
	return time.Duration(ut+st) * clockTick
}

// selfCPU is this process's user+system CPU time.
func selfCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
