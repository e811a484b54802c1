// Package xdp benchmarks simdedge's datagram fast path (HTTP/1.1 requests
// in UDP datagrams, parsed in place in AF_XDP UMEM frames, xdp.Listener)
// against the same server core and handler behind a plain kernel UDP
// socket (udpListener, this package).
//
// How the packets are produced: not by a client's kernel. A veth pair's
// kernel-built traffic costs the sender more than either receiver, and on
// veth AF_XDP shows no gain for it (FACTS.md). Instead the benchmark models
// a NIC: it injects raw, ready-made Ethernet frames (the same 83-byte
// request frame every time, checksums valid) into the server's veth with
// BPF_PROG_TEST_RUN in live-frames mode (BPF_F_TEST_XDP_LIVE_FRAMES,
// xdp.Program.Inject), running simdedge's own steering program on them as
// the driver would. With an AF_XDP socket registered the program redirects
// them into the socket (copy mode: the kernel copies each frame into the
// UMEM); without one its XDP_PASS fallback hands them to the kernel's
// stack, which delivers them to the UDP socket. Replies go out for real,
// through the AF_XDP TX ring or sendto, over the veth to the client
// namespace, where a socket absorbs them.
//
// The generator is closed-loop: it keeps at most window requests
// outstanding (injected, not yet answered), so neither receive queue
// overflows and every injected request is answered. Metrics per request:
// ns/op (wall time: 1e9/ns/op is requests per second), cpu-ns/op (CPU time
// of the whole process, user and system, generator included: the kernel
// work of receiving a frame runs inside the injecting syscall, as it would
// run in a NIC's softirq), gen-cpu-ns/op (the injecting thread alone).
//
// # TCP
//
// BenchmarkTCPKeepAlive compares TCP on gVisor over AF_XDP (xdp/netstack)
// with kernel TCP, the same server core and handler on one veth pair, fed
// by a raw-frame client (tcpGen, tcpgen_test.go): an AF_PACKET socket in
// the client namespace from which it speaks just enough TCP to open
// keep-alive connections and send GETs, each request carrying the
// acknowledgement of the previous response. No client kernel TCP is on
// the path, so the figure is not set by a client's delayed-ACK and
// quick-ACK choices (the kernel-client benchmark in xdp/netstack saw about
// two frames in per request, the client kernel's pure ACKs among them).
// The requests are not injected with BPF_PROG_TEST_RUN as the datagrams
// are: a live-frames run repeats one frame, and TCP's frames differ per
// connection and per request, so each run would carry a single frame and
// the syscall's per-run setup with it. They go out of the client's veth
// instead, and reach the server's veth, and its XDP program, as a NIC's
// frames would.
//
// The generator is a process of its own (this test binary again, in the
// client namespace), so the server's process holds none of its work.
// cpu-ns/op is the server's CPU per request: the server process's CPU time
// plus the generator's time inside send(2), where the kernel receives the
// request (veth, XDP, then the AF_XDP copy or the whole kernel TCP receive
// path), work a NIC would bill to the server; it also holds the packet
// socket's own sending, the same for both transports. gen-cpu-ns/op is the
// generator process's CPU time, send-cpu-ns/op its part inside send(2).
//
// Needs root (network namespaces, BPF); run with bench/xdp/run.sh, which
// interleaves the two transports over rounds and compares them with
// benchstat (BENCH=TCPKeepAlive for the TCP benchmark).
package xdp
