//go:build rdma && cgo

package rdma_test

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/simdedge/simdedge/rdma"
)

// The two-process tests re-run the test binary as the peer
// (TestHelperProcess with helperEnv set), which listens, prints its address
// and serves the protocol below until the connection ends.
const helperEnv = "SIMDEDGE_RDMA_HELPER"

// Helper protocol: the helper first sends a 24-byte hello (region address,
// key, size), then answers each message: "echo..." comes back as is;
// "crc" comes back as the CRC-32 of the region's bytes (4 bytes).
const (
	helperRegion = 1 << 20
	helperSlot   = 4096
	helperRecvs  = 16
)

func TestHelperProcess(t *testing.T) {
	if os.Getenv(helperEnv) != "1" {
		return // only the peer of the two-process tests runs it
	}
	if err := helper(); err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// helperPollEnv set to 1 makes the helper busy-poll instead of waiting,
// for the two-process benchmark's poll mode.
const helperPollEnv = "SIMDEDGE_RDMA_HELPER_POLL"

func helper() error {
	f, err := rdma.OpenFabric(rdma.Options{Provider: "tcp", Node: loopback})
	if err != nil {
		return err
	}
	l, err := f.Listen(loopback + ":0")
	if err != nil {
		return err
	}
	fmt.Printf("addr %s\n", l.Addr())
	e, err := l.Accept()
	l.Close()
	if err != nil {
		return err
	}
	defer e.Close()
	shared, err := f.Register(helperRegion) // the peer reads and writes it
	if err != nil {
		return err
	}
	for i := range shared.Bytes() {
		shared.Bytes()[i] = byte(i * 31)
	}
	bufs, err := f.Register(2 * helperRecvs * helperSlot) // receives, then replies
	if err != nil {
		return err
	}
	b := bufs.Bytes()
	for i := range helperRecvs {
		if err := e.PostRecv(bufs, i*helperSlot, helperSlot, uint64(i)); err != nil {
			return err
		}
	}
	reply := helperRecvs * helperSlot
	binary.LittleEndian.PutUint64(b[reply:], shared.Addr(0))
	binary.LittleEndian.PutUint64(b[reply+8:], shared.Key())
	binary.LittleEndian.PutUint64(b[reply+16:], helperRegion)
	if err := e.PostSend(bufs, reply, 24, 1<<32); err != nil {
		return err
	}
	out := make([]rdma.Completion, 32)
	spin := os.Getenv(helperPollEnv) == "1"
	for {
		var n int
		var err error
		if spin {
			n, err = e.Poll(out)
		} else {
			n, err = e.Wait(out, 30*time.Second)
		}
		if errors.Is(err, rdma.ErrPeerClosed) {
			return nil // the test ended the connection
		}
		if err != nil {
			return err
		}
		for _, c := range out[:n] {
			if errors.Is(c.Err, rdma.ErrPeerClosed) {
				return nil
			}
			if c.Err != nil {
				return fmt.Errorf("completion %+v", c)
			}
			if c.Op != rdma.OpRecv {
				continue
			}
			slot := int(c.ID)
			msg := b[slot*helperSlot : slot*helperSlot+c.Len]
			dst := reply + slot*helperSlot
			n := copy(b[dst:dst+helperSlot], msg)
			if string(msg) == "crc" {
				binary.LittleEndian.PutUint32(b[dst:], crc32.ChecksumIEEE(shared.Bytes()))
				n = 4
			}
			if err := e.PostSend(bufs, dst, n, 1<<32|uint64(slot)); err != nil {
				return err
			}
			if err := e.PostRecv(bufs, slot*helperSlot, helperSlot, uint64(slot)); err != nil {
				return err
			}
		}
	}
}

// startHelper runs the peer process and returns it with its address.
func startHelper(t testing.TB, env ...string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
	cmd.Env = append(append(os.Environ(), helperEnv+"=1"), env...)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(stdout).ReadString('\n')
		line <- s
	}()
	select {
	case s := <-line:
		addr, ok := strings.CutPrefix(strings.TrimSpace(s), "addr ")
		if !ok {
			t.Fatalf("helper printed %q, want its address", s)
		}
		return cmd, addr
	case <-time.After(20 * time.Second):
		t.Fatal("helper did not print its address in 20 s")
	}
	return nil, ""
}

// waitExit waits (bounded) for the helper to exit and returns its error.
func waitExit(t testing.TB, cmd *exec.Cmd) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(20 * time.Second):
		t.Fatal("helper did not exit within 20 s")
	}
	return nil
}

// Two processes: messages both ways with ids, and RDMA READ/WRITE into
// the other process's memory with the key it advertised.
func TestTwoProcesses(t *testing.T) {
	f := openFabric(t, "tcp")
	cmd, addr := startHelper(t)
	e, err := f.Dial(addr, 10*time.Second)
	if err != nil {
		t.Fatalf("Dial helper at %s: %v", addr, err)
	}
	r := register(t, f, 2*helperRegion)
	b := r.Bytes()
	if err := e.PostRecv(r, 0, helperSlot, 0); err != nil {
		t.Fatal(err)
	}
	hello := collect(t, e, 1)[0]
	if hello.Len != 24 || hello.Err != nil {
		t.Fatalf("hello %+v", hello)
	}
	raddr, rkey := binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[8:])

	// 200 requests, pipelined 8 deep, each answered with its own bytes.
	const total, depth = 200, 8
	out := make([]rdma.Completion, 16)
	sent, answered, inflight := 0, 0, 0
	deadline := time.Now().Add(20 * time.Second)
	for answered < total {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d answers after 20 s", answered, total)
		}
		for inflight < depth && sent < total {
			slot := sent % depth
			off := helperSlot * (1 + slot)
			msg := fmt.Sprintf("echo %d %s", sent, strings.Repeat("x", sent))
			copy(b[off:], msg)
			// Replies land in the receive half, one slot per request.
			if err := e.PostRecv(r, helperRegion+off, helperSlot, uint64(sent)); err != nil {
				t.Fatal(err)
			}
			if err := e.PostSend(r, off, len(msg), 1<<32|uint64(sent)); err != nil {
				t.Fatal(err)
			}
			sent++
			inflight++
		}
		n, err := e.Wait(out, time.Second)
		if err != nil && !errors.Is(err, rdma.ErrTimeout) {
			t.Fatal(err)
		}
		for _, c := range out[:n] {
			if c.Err != nil {
				t.Fatalf("completion %+v", c)
			}
			if c.Op != rdma.OpRecv {
				continue
			}
			i := int(c.ID)
			want := fmt.Sprintf("echo %d %s", i, strings.Repeat("x", i))
			off := helperRegion + helperSlot*(1+i%depth)
			if got := string(b[off : off+c.Len]); got != want {
				t.Fatalf("answer %d = %q, want %q", i, got, want)
			}
			answered++
			inflight--
		}
	}

	// RDMA READ of the helper's whole region, written by its CPU.
	if err := e.PostRead(r, 0, helperRegion, raddr, rkey, 7); err != nil {
		t.Fatal(err)
	}
	if c := collect(t, e, 1)[0]; c.Err != nil || c.Op != rdma.OpRead {
		t.Fatalf("read %+v", c)
	}
	for i := range helperRegion {
		if b[i] != byte(i*31) {
			t.Fatalf("READ from the other process: byte %d = %d, want %d", i, b[i], byte(i*31))
		}
	}
	// RDMA WRITE of new bytes, then ask the helper for the CRC of its region.
	for i := range 1000 {
		b[i] = byte(i ^ 0x5a)
	}
	if err := e.PostWrite(r, 0, 1000, raddr+0, rkey, 8); err != nil {
		t.Fatal(err)
	}
	copy(b[helperSlot:], "crc")
	e.PostRecv(r, helperRegion+helperSlot, helperSlot, 9)
	e.PostSend(r, helperSlot, 3, 10)
	var crc uint32
	for _, c := range collect(t, e, 3) {
		if c.Err != nil {
			t.Fatalf("completion %+v", c)
		}
		if c.ID == 9 {
			crc = binary.LittleEndian.Uint32(b[helperRegion+helperSlot:])
		}
	}
	want := make([]byte, helperRegion)
	for i := range want {
		want[i] = byte(i * 31)
	}
	copy(want, b[:1000])
	if crc != crc32.ChecksumIEEE(want) {
		t.Errorf("helper's region after WRITE: crc %08x, want %08x", crc, crc32.ChecksumIEEE(want))
	}

	// Closing makes the helper see ErrPeerClosed and exit 0.
	e.Close()
	if err := waitExit(t, cmd); err != nil {
		t.Errorf("helper: %v", err)
	}
}

// A peer process that dies (SIGKILL, no orderly shutdown) surfaces as
// ErrPeerClosed, never as a hang.
func TestPeerProcessKilled(t *testing.T) {
	f := openFabric(t, "tcp")
	cmd, addr := startHelper(t)
	e, err := f.Dial(addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	r := register(t, f, 1<<16)
	if _, err := e.PostRecvBatch(r, []rdma.Span{{0, 4096, 1}, {4096, 4096, 2}, {8192, 4096, 3}}); err != nil {
		t.Fatal(err)
	}
	collect(t, e, 1) // the hello: the helper is serving
	cmd.Process.Kill()
	out := make([]rdma.Completion, 8)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if time.Now().After(deadline) {
			t.Fatal("no error 10 s after the peer was killed")
		}
		n, err := e.Wait(out, time.Second)
		if errors.Is(err, rdma.ErrPeerClosed) {
			break
		}
		if err != nil && !errors.Is(err, rdma.ErrTimeout) {
			t.Fatalf("Wait = %v, want ErrPeerClosed", err)
		}
		if n > 0 && errors.Is(out[0].Err, rdma.ErrPeerClosed) {
			break
		}
		if n > 0 && out[0].Err != nil {
			t.Fatalf("completion %+v, want ErrPeerClosed", out[0])
		}
	}
	if err := e.PostSend(r, 0, 1, 4); err == nil {
		// Some providers accept the post and fail its completion.
		_, _ = e.Poll(out)
	}
}
