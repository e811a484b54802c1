//go:build rdma && cgo

package rdma_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"runtime/metrics"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/simdedge/simdedge/rdma"
)

// Benchmarks of the binding itself; the message transport's benchmarks
// (R2) build on these. All run in one process, so cpu-ns/op is the CPU of
// both ends of a round trip (plus any provider thread), which is what
// fi_pingpong's two processes add up to (see doc.go for the comparison).
//
//	go test -tags rdma -run '^$' -bench . -count 10 ./rdma/

// cpuTime is the CPU time this process has used; on the shared machine
// wall-clock ns/op varies by tens of percent, CPU time per op much less.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// cgoCalls reads the runtime's count of Go-to-C calls.
func cgoCalls() uint64 {
	s := []metrics.Sample{{Name: "/cgo/go-to-c-calls:calls"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// measure runs loop and reports cpu-ns/op and cgo-calls/op beside ns/op.
func measure(b *testing.B, loop func()) (cpu time.Duration) {
	b.ReportAllocs()
	calls, cpu0 := cgoCalls(), cpuTime()
	b.ResetTimer()
	loop()
	b.StopTimer()
	cpu = cpuTime() - cpu0
	if b.N > 0 {
		b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
		b.ReportMetric(float64(cgoCalls()-calls)/float64(b.N), "cgo-calls/op")
	}
	return cpu
}

// benchPair is a connected pair with one registered region per side.
func benchPair(b *testing.B, provider string, size int) (p pair, cr, sr *rdma.Region) {
	f := openFabric(b, provider)
	p = connect(b, f)
	return p, register(b, f, 2*size), register(b, f, 2*size)
}

// echo serves p.server until stop is closed: every message that arrives is
// sent back, and its receive re-posted. blocking selects Wait over a
// busy Poll loop.
func echo(b *testing.B, e *rdma.Endpoint, r *rdma.Region, size int, blocking bool, stop chan struct{}) chan error {
	done := make(chan error, 1)
	if err := e.PostRecv(r, 0, size, 0); err != nil {
		b.Fatal(err)
	}
	go func() {
		var out [16]rdma.Completion
		for {
			var n int
			var err error
			if blocking {
				n, err = e.Wait(out[:], 10*time.Millisecond)
			} else {
				n, err = e.Poll(out[:])
			}
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			if err != nil && !errors.Is(err, rdma.ErrTimeout) {
				done <- err
				return
			}
			for _, c := range out[:n] {
				if c.Err != nil {
					done <- c.Err
					return
				}
				if c.Op != rdma.OpRecv {
					continue
				}
				if err := e.PostRecv(r, 0, size, 0); err != nil {
					done <- err
					return
				}
				if err := e.PostSend(r, 0, c.Len, 1); err != nil {
					done <- err
					return
				}
			}
		}
	}()
	return done
}

// BenchmarkPingPong is one message out and its echo back per op (a round
// trip), the same exchange as fi_pingpong -e msg.
func BenchmarkPingPong(b *testing.B) {
	for _, prov := range msgProviders {
		for _, size := range []struct {
			name string
			n    int
		}{{"64B", 64}, {"4KiB", 4096}} {
			for _, mode := range []string{"poll", "wait"} {
				b.Run(prov+"/"+size.name+"/"+mode, func(b *testing.B) {
					pingPong(b, prov, size.n, mode == "wait")
				})
			}
		}
	}
}

func pingPong(b *testing.B, prov string, size int, blocking bool) {
	p, cr, sr := benchPair(b, prov, size)
	stop := make(chan struct{})
	done := echo(b, p.server, sr, size, blocking, stop)
	if err := p.client.PostRecv(cr, size, size, 0); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(2 * size))
	var out [16]rdma.Completion
	measure(b, func() {
		for range b.N {
			if err := p.client.PostSend(cr, 0, size, 1); err != nil {
				b.Fatal(err)
			}
			for got := false; !got; {
				var n int
				var err error
				if blocking {
					n, err = p.client.Wait(out[:], time.Second)
				} else {
					n, err = p.client.Poll(out[:])
				}
				if err != nil {
					b.Fatal(err)
				}
				for _, c := range out[:n] {
					if c.Err != nil {
						b.Fatal(c.Err)
					}
					if c.Op == rdma.OpRecv {
						got = true
						if err := p.client.PostRecv(cr, size, size, 0); err != nil {
							b.Fatal(err)
						}
					}
				}
			}
		}
	})
	close(stop)
	if err := <-done; err != nil {
		b.Fatal(err)
	}
}

// BenchmarkPingPongProcs is BenchmarkPingPong with the echoing side in a
// second process (the test binary re-executed, as in the two-process
// tests), which is how fi_pingpong runs: in one process both endpoints
// share the provider's progress engine and its locks. cpu-ns/op adds the
// peer's CPU time (from /proc, 10 ms ticks, so runs should last seconds).
func BenchmarkPingPongProcs(b *testing.B) {
	for _, size := range []struct {
		name string
		n    int
	}{{"64B", 64}, {"4KiB", 4096}} {
		for _, mode := range []string{"poll", "wait"} {
			b.Run("tcp/"+size.name+"/"+mode, func(b *testing.B) {
				pingPongProcs(b, size.n, mode == "wait")
			})
		}
	}
}

func pingPongProcs(b *testing.B, size int, blocking bool) {
	f := openFabric(b, "tcp")
	env := helperPollEnv + "=0"
	if !blocking {
		env = helperPollEnv + "=1"
	}
	cmd, addr := startHelper(b, env)
	e, err := f.Dial(addr, 10*time.Second)
	if err != nil {
		b.Fatal(err)
	}
	r := register(b, f, 2*helperSlot)
	if err := e.PostRecv(r, helperSlot, helperSlot, 0); err != nil {
		b.Fatal(err)
	}
	collect(b, e, 1) // the helper's hello
	// Requests must not say "crc"; they start with "echo".
	copy(r.Bytes(), bytes.Repeat([]byte("echo"), size/4+1)[:size])
	if err := e.PostRecv(r, helperSlot, helperSlot, 0); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(2 * size))
	peer := procCPU(b, cmd.Process.Pid)
	var out [16]rdma.Completion
	measure(b, func() {
		for range b.N {
			if err := e.PostSend(r, 0, size, 1); err != nil {
				b.Fatal(err)
			}
			for got := false; !got; {
				var n int
				var err error
				if blocking {
					n, err = e.Wait(out[:], time.Second)
				} else {
					n, err = e.Poll(out[:])
				}
				if err != nil {
					b.Fatal(err)
				}
				for _, c := range out[:n] {
					if c.Err != nil {
						b.Fatal(c.Err)
					}
					if c.Op == rdma.OpRecv {
						got = true
						if c.Len != size {
							b.Fatalf("echo of %d bytes, want %d", c.Len, size)
						}
						if err := e.PostRecv(r, helperSlot, helperSlot, 0); err != nil {
							b.Fatal(err)
						}
					}
				}
			}
		}
	})
	if b.N > 0 {
		b.ReportMetric(float64(procCPU(b, cmd.Process.Pid)-peer)/float64(b.N), "peer-cpu-ns/op")
	}
	e.Close()
	if err := waitExit(b, cmd); err != nil {
		b.Errorf("helper: %v", err)
	}
}

// procCPU reads a process's user+system CPU time from /proc/PID/stat
// (fields 14 and 15, in clock ticks of 10 ms).
func procCPU(tb testing.TB, pid int) time.Duration {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		tb.Fatal(err)
	}
	// The command name (field 2) may contain spaces; fields follow its ')'.
	rest := raw[bytes.LastIndexByte(raw, ')')+2:]
	fields := bytes.Fields(rest)
	utime, err1 := strconv.ParseInt(string(fields[11]), 10, 64)
	stime, err2 := strconv.ParseInt(string(fields[12]), 10, 64)
	if err1 != nil || err2 != nil {
		tb.Fatalf("/proc/%d/stat: %v %v", pid, err1, err2)
	}
	const tick = 10 * time.Millisecond // USER_HZ is 100 on Linux
	return time.Duration(utime+stime) * tick
}

// BenchmarkCgoCall is the bare cost of crossing into C and back.
func BenchmarkCgoCall(b *testing.B) {
	x := 0
	measure(b, func() {
		for range b.N {
			x = rdma.CgoNoop(x)
		}
	})
	if x != b.N {
		b.Fatal("sd_noop miscounted")
	}
}

// BenchmarkPoll/empty is the cost of one Poll on idle queues: the cgo call,
// two fi_cq_read and the event-queue check. batchN moves N messages per op
// (N receives and N sends posted in one call each, all their completions
// collected with as few Polls as the provider allows); compare its
// cgo-calls/op and ns/op per message with batch1's.
func BenchmarkPoll(b *testing.B) {
	b.Run("empty", func(b *testing.B) {
		p, _, _ := benchPair(b, "tcp", 4096)
		var out [16]rdma.Completion
		measure(b, func() {
			for range b.N {
				if n, err := p.client.Poll(out[:]); n != 0 || err != nil {
					b.Fatal(n, err)
				}
			}
		})
	})
	for _, batch := range []int{1, 16} {
		b.Run("batch"+itoa(batch), func(b *testing.B) {
			const size = 64
			p, cr, sr := benchPair(b, "tcp", batch*size)
			spans := make([]rdma.Span, batch)
			for i := range spans {
				spans[i] = rdma.Span{Off: i * size, Len: size, ID: uint64(i)}
			}
			var out [32]rdma.Completion
			measure(b, func() {
				for range b.N {
					if _, err := p.server.PostRecvBatch(sr, spans); err != nil {
						b.Fatal(err)
					}
					if _, err := p.client.PostSendBatch(cr, spans); err != nil {
						b.Fatal(err)
					}
					for recvs, sends := 0, 0; recvs < batch || sends < batch; {
						n, err := p.client.Poll(out[:])
						if err != nil {
							b.Fatal(err)
						}
						sends += n
						n, err = p.server.Poll(out[:])
						if err != nil {
							b.Fatal(err)
						}
						recvs += n
					}
				}
			})
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batch), "ns/msg")
		})
	}
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}
