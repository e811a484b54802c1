//go:build rdma && cgo

package rdma_test

import (
	"context"
	"io"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/simdedge/simdedge/parse/json/envelope"
	"github.com/simdedge/simdedge/rdma"
	"github.com/simdedge/simdedge/server"
)

// Benchmarks of the message transport against the project's own server on
// kernel TCP with HTTP keep-alive, both in this process over loopback, one
// request at a time, so ns/op is the round-trip latency and cpu-ns/op the
// CPU of both ends (client, server, provider threads). p50-us and p99-us
// are latency percentiles over the run. Software providers (tcp here) are
// not RDMA hardware: they run the same libfabric calls over kernel
// sockets, so these figures measure the transport's overhead, not RDMA.
//
//	go test -tags rdma -run '^$' -bench 'Transport|KernelTCP' -count 10 ./rdma/

var benchReq = []byte("GET /healthz HTTP/1.1\r\nHost: backend\r\nUser-Agent: bench\r\nAccept: */*\r\n\r\n")

// okHandler never blocks: the inline serve runs it on the poller.
var okHandler = server.Inline(server.HandlerFunc(func(w *server.ResponseWriter, r *server.Request) {
	w.AddHeader("Content-Type", "text/plain")
	w.WriteString("ok\n")
}))

// latencies records per-request times and reports p50 and p99.
type latencies []time.Duration

func (l latencies) report(b *testing.B) {
	if len(l) == 0 {
		return
	}
	slices.Sort(l)
	b.ReportMetric(float64(l[len(l)/2].Nanoseconds())/1e3, "p50-us")
	b.ReportMetric(float64(l[len(l)*99/100].Nanoseconds())/1e3, "p99-us")
}

// pollModes are the completion-queue waits the benchmarks compare, both
// ends alike: block parks in Go's network poller at once (the default),
// busy polls for DefaultSpin after the last activity first, as
// fi_pingpong polls.
var pollModes = []rdma.PollMode{rdma.PollBlock, rdma.PollBusy}

// benchWindow is the window of every benchmark connection.
var (
	benchListen = rdma.ListenConfig{Credits: 32, MessageSize: 4096}
	benchDial   = rdma.DialOptions{Credits: 32, MessageSize: 4096}
)

// withPoll runs f as sub-benchmark poll=MODE with the benchmark window
// in that mode.
func withPoll(b *testing.B, mode rdma.PollMode, f func(b *testing.B, lc rdma.ListenConfig, do rdma.DialOptions)) {
	b.Run("poll="+mode.String(), func(b *testing.B) {
		lc, do := benchListen, benchDial
		lc.Poll, do.Poll = mode, mode
		f(b, lc, do)
	})
}

func BenchmarkTransportRoundTrip(b *testing.B) {
	for _, mode := range pollModes {
		withPoll(b, mode, func(b *testing.B, lc rdma.ListenConfig, do rdma.DialOptions) {
			_, addr := startBackend(b, lc, okHandler)
			roundTrips(b, addr, do)
		})
	}
}

// roundTrips runs b.N requests one at a time against addr.
func roundTrips(b *testing.B, addr string, o rdma.DialOptions) (cpu time.Duration) {
	return roundTripsOf(b, addr, (*rdma.Client).RoundTrip, benchReq, o)
}

// roundTripsOf runs b.N requests req one at a time against addr, sent
// with rt (RoundTrip or RoundTripEnvelope).
func roundTripsOf(b *testing.B, addr string, rt func(*rdma.Client, []byte, time.Duration, func([]byte, bool) error) error, req []byte, o rdma.DialOptions) (cpu time.Duration) {
	needTransport(b)
	c := dialClient(b, addr, o)
	n := 0
	part := func(p []byte, more bool) error { n += len(p); return nil }
	if err := rt(c, req, 0, part); err != nil {
		b.Fatal(err)
	}
	lat := make(latencies, 0, b.N)
	b.SetBytes(int64(len(req)))
	cpu = measure(b, func() {
		for range b.N {
			t0 := time.Now()
			if err := rt(c, req, 0, part); err != nil {
				b.Fatal(err)
			}
			lat = append(lat, time.Since(t0))
		}
	})
	lat.report(b)
	return cpu
}

// BenchmarkTransportVsTCP is the benchrun "rdma" area: one request at a
// time, cpu-ns/op both ends, for the message transport (HTTP/1.1 and
// envelope requests, client and server in this process; and, like
// fi_pingpong, in two processes busy-polling) and the same server and
// handler on kernel TCP with keep-alive, named so that the report takes
// each row's ratio against kernel_tcp.
func BenchmarkTransportVsTCP(b *testing.B) {
	b.Run("pingpong/rdma", func(b *testing.B) {
		_, addr := startBackend(b, benchListen, okHandler)
		roundTrips(b, addr, benchDial)
	})
	b.Run("pingpong/rdma_envelope", func(b *testing.B) {
		_, addr := startBackend(b, benchListen, okHandler)
		roundTripsOf(b, addr, (*rdma.Client).RoundTripEnvelope, benchEnvelope, benchDial)
	})
	busy := func(b *testing.B) {
		lc, do := benchListen, benchDial
		lc.Poll, do.Poll = rdma.PollBusy, rdma.PollBusy
		_, addr := startBackend(b, lc, okHandler)
		roundTrips(b, addr, do)
	}
	b.Run("pingpong/rdma_busy", busy)
	// Like for like with fi_pingpong: two processes, both busy-polling,
	// cpu-ns/op both processes' CPU per request.
	b.Run("pingpong/rdma_procs_busy", func(b *testing.B) { procsPingPong(b, rdma.PollBusy, true) })
	b.Run("pingpong/kernel_tcp", kernelTCPKeepAlive)
}

// procsPingPong runs b.N requests one at a time against a backend in a
// second process, both in poll mode, and reports the backend's CPU per
// request as peer-cpu-ns/op (from /proc, 10 ms ticks: use thousands of
// iterations). With both, cpu-ns/op is the sum of the two processes'
// (client-cpu-ns/op this one's); otherwise it is this process's.
func procsPingPong(b *testing.B, poll rdma.PollMode, both bool) {
	cmd, addr, stop := startBackendProcess(b, poll)
	do := benchDial
	do.Poll = poll
	peer := procCPU(b, cmd.Process.Pid)
	own := roundTrips(b, addr, do)
	if b.N > 0 {
		peer = procCPU(b, cmd.Process.Pid) - peer
		b.ReportMetric(float64(peer)/float64(b.N), "peer-cpu-ns/op")
		if both {
			b.ReportMetric(float64(own)/float64(b.N), "client-cpu-ns/op")
			b.ReportMetric(float64(own+peer)/float64(b.N), "cpu-ns/op")
		}
	}
	stop()
}

// benchEnvelope is benchReq as a request envelope.
var benchEnvelope = envelope.NewBuilder(0).Build(&envelope.Parts{Method: []byte("GET"), Target: []byte("/healthz"), Version: 11,
	Headers: []envelope.Header{{Name: []byte("Host"), Value: []byte("backend")},
		{Name: []byte("User-Agent"), Value: []byte("bench")}, {Name: []byte("Accept"), Value: []byte("*/*")}}})

// BenchmarkTransportPipelined: 16 requests in flight on one connection:
// requests/s is 1e9 / ns/op.
func BenchmarkTransportPipelined(b *testing.B) {
	for _, mode := range pollModes {
		withPoll(b, mode, func(b *testing.B, lc rdma.ListenConfig, do rdma.DialOptions) {
			_, addr := startBackend(b, lc, okHandler)
			pipelined(b, addr, do)
		})
	}
}

func pipelined(b *testing.B, addr string, o rdma.DialOptions) {
	needTransport(b)
	c := dialClient(b, addr, o)
	b.SetBytes(int64(len(benchReq)))
	b.SetParallelism(8) // 16 goroutines on 2 Ps
	measure(b, func() {
		b.RunParallel(func(pb *testing.PB) {
			part := func(p []byte, more bool) error { return nil }
			for pb.Next() {
				if err := c.RoundTrip(benchReq, 0, part); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}

// BenchmarkTransportProcs: the backend in a second process (the test
// binary re-run as TestTransportBackendProcess), as fi_pingpong runs;
// cpu-ns/op is this process, peer-cpu-ns/op the backend's (from /proc,
// 10 ms ticks: use thousands of iterations). Both processes use the
// sub-benchmark's poll mode.
func BenchmarkTransportProcs(b *testing.B) {
	for _, mode := range []string{"pingpong", "pipelined16"} {
		for _, poll := range pollModes {
			b.Run(mode+"/poll="+poll.String(), func(b *testing.B) {
				if mode == "pingpong" {
					procsPingPong(b, poll, false)
					return
				}
				cmd, addr, stop := startBackendProcess(b, poll)
				do := benchDial
				do.Poll = poll
				peer := procCPU(b, cmd.Process.Pid)
				pipelined(b, addr, do)
				if b.N > 0 {
					b.ReportMetric(float64(procCPU(b, cmd.Process.Pid)-peer)/float64(b.N), "peer-cpu-ns/op")
				}
				stop()
			})
		}
	}
}

func BenchmarkKernelTCPKeepAlive(b *testing.B) { kernelTCPKeepAlive(b) }

// kernelTCPKeepAlive runs b.N requests one at a time over one kernel TCP
// keep-alive connection to the server core, in this process.
func kernelTCPKeepAlive(b *testing.B) {
	s := server.New(server.Options{Handler: okHandler})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go s.ServeStream(server.TCPListener(l))
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.Shutdown(ctx)
	})
	conn, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	buf := make([]byte, 4096)
	conn.Write(benchReq)
	size, err := conn.Read(buf)
	if err != nil {
		b.Fatal(err)
	}
	lat := make(latencies, 0, b.N)
	b.SetBytes(int64(len(benchReq)))
	measure(b, func() {
		for range b.N {
			t0 := time.Now()
			conn.Write(benchReq)
			if _, err := io.ReadFull(conn, buf[:size]); err != nil {
				b.Fatal(err)
			}
			lat = append(lat, time.Since(t0))
		}
	})
	lat.report(b)
}
