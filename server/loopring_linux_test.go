//go:build linux

package server

import (
	"bufio"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Tests of the loop's io_uring batching (loopring_linux.go). The shared
// suite's loop runs already route every read and write through the ring
// (enginetest sets SIMDEDGE_IO_URING=all); these check the default
// setting, the setting off, and sends the ring completes partially.

// needRing skips when io_uring cannot be set up here.
func needRing(t *testing.T) {
	t.Helper()
	r := newRing()
	if r == nil {
		t.Skip("io_uring is unavailable here (kernel, seccomp or kernel.io_uring_disabled)")
	}
	r.close()
}

// ringTraffic runs clients concurrent keep-alive clients of n requests each
// against addr and checks every answer.
func ringTraffic(t *testing.T, addr string, clients, n int) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan string, clients)
	for i := range clients {
		c := dial(t, addr)
		wg.Add(1)
		go func() {
			defer wg.Done()
			br := bufio.NewReader(c)
			for j := range n {
				// Every third request is a pipelined pair.
				want := []string{"/" + strconv.Itoa(i) + "/" + strconv.Itoa(j)}
				if j%3 == 0 {
					want = append(want, want[0]+"b")
				}
				var req string
				for _, p := range want {
					req += "GET " + p + " HTTP/1.1\r\nHost: x\r\n\r\n"
				}
				if _, err := io.WriteString(c, req); err != nil {
					errs <- err.Error()
					return
				}
				for _, p := range want {
					resp, err := readResp(br)
					if err != nil || resp != p {
						errs <- "client " + strconv.Itoa(i) + ": got " + strconv.Quote(resp) + " for " + p
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// readResp reads one response of echoTarget and returns its body.
func readResp(br *bufio.Reader) (string, error) {
	n := -1
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return "", err
		}
		if line == "\r\n" {
			break
		}
		if v, ok := strings.CutPrefix(line, "Content-Length: "); ok {
			n, _ = strconv.Atoi(strings.TrimSpace(v))
		}
	}
	if n < 0 {
		return "", io.ErrUnexpectedEOF
	}
	b := make([]byte, n)
	_, err := io.ReadFull(br, b)
	return string(b), err
}

var echoTarget = Inline(HandlerFunc(func(w *ResponseWriter, r *Request) {
	w.WriteString(string(r.Target()))
}))

// TestLoopRingBatches: with the default setting, concurrent clients make
// batches that go through the ring, and every answer is right.
func TestLoopRingBatches(t *testing.T) {
	needRing(t)
	t.Setenv(ringEnv, "")
	s, addr := startLoop(t, echoTarget, Options{})
	if lp := loopOf(t, s); lp.ring == nil || lp.ringMin != 2 {
		t.Fatalf("loop ring %v, smallest batch %d; want a ring for batches of 2", lp.ring != nil, lp.ringMin)
	}
	before := ringEnters.Load()
	ringTraffic(t, addr, 16, 200)
	if ringEnters.Load() == before {
		t.Fatal("16 concurrent clients made no batch through the ring")
	}
}

// TestLoopRingOff: SIMDEDGE_IO_URING=off serves with read(2) and write(2).
func TestLoopRingOff(t *testing.T) {
	t.Setenv(ringEnv, "off")
	s, addr := startLoop(t, echoTarget, Options{})
	if loopOf(t, s).ring != nil {
		t.Fatal("the loop set up a ring with SIMDEDGE_IO_URING=off")
	}
	before := ringEnters.Load()
	ringTraffic(t, addr, 8, 100)
	if n := ringEnters.Load() - before; n != 0 {
		t.Fatalf("%d io_uring_enter calls with the ring off", n)
	}
}

// TestLoopRingPartialSend: a client with a small receive buffer that reads
// only after its requests are all answered makes the ring's sends come back
// short and then EAGAIN; the loop finishes them on EPOLLOUT, complete and in
// order, while another client is served meanwhile.
func TestLoopRingPartialSend(t *testing.T) {
	needRing(t)
	t.Setenv(ringEnv, "all")
	const size = 48 << 10 // below flushThreshold: each answer is a ring send
	body := strings.Repeat("0123456789abcdef", size/16)
	h := Inline(HandlerFunc(func(w *ResponseWriter, r *Request) {
		w.WriteString(string(r.Target()[1:]) + "|")
		w.WriteString(body)
	}))
	_, addr := startLoop(t, h, Options{})
	d := net.Dialer{Timeout: testTimeout, Control: func(_, _ string, rc syscall.RawConn) error {
		rc.Control(func(fd uintptr) {
			syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096)
		})
		return nil
	}}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(testTimeout))
	// 6 MiB of answers: more than the largest send buffer (tcp_wmem 4 MiB).
	const n = 128
	for i := range n {
		// One request per write, a turn each: one ring send per answer.
		if _, err := io.WriteString(c, "GET /"+strconv.Itoa(i)+" HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Millisecond)
	}
	// The loop is not stuck on the blocked client.
	other := dial(t, addr)
	io.WriteString(other, "GET /other HTTP/1.1\r\nHost: x\r\n\r\n")
	if _, got := readResponse(t, bufio.NewReader(other), "GET"); !strings.HasPrefix(got, "other|") {
		t.Fatalf("other client got %.20q", got)
	}
	br := bufio.NewReaderSize(c, 512)
	for i := range n {
		resp, got := readResponse(t, br, "GET")
		want := strconv.Itoa(i) + "|" + body
		if resp.StatusCode != 200 || got != want {
			t.Fatalf("response %d: status %d, %d bytes, starts %.10q", i, resp.StatusCode, len(got), got)
		}
	}
}
