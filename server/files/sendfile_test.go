package files_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/simdedge/simdedge/internal/testenv"
	"github.com/simdedge/simdedge/internal/testnet"
	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/files"
	"github.com/simdedge/simdedge/server/internal/servetest"
	"github.com/simdedge/simdedge/server/router"
)

// serveFiles runs a plain files server with opts on the test engine.
func serveFiles(t *testing.T, tr *tree, opts server.Options) string {
	t.Helper()
	fh, err := files.New(files.Options{Root: tr.root})
	if err != nil {
		t.Fatal(err)
	}
	tab, err := router.New([]router.Route{{Handler: fh}})
	if err != nil {
		t.Fatal(err)
	}
	opts.Handler = router.NewSwitch(tab)
	s := server.New(opts)
	addr := servetest.Serve(t, s, testEngine)
	return addr
}

// TestSendfilePipelined: pipelined requests for large files (sendfile on
// both engines), a small one and a range between them come back whole and
// in order on one connection.
func TestSendfilePipelined(t *testing.T) {
	testenv.CheckGoroutines(t)
	tr := makeTree(t)
	addr := serveFiles(t, tr, server.Options{})
	c := testnet.Dial(t, addr, testTimeout)
	reqs := "GET /big.bin HTTP/1.1\r\nHost: x\r\n\r\n" +
		"GET /small.txt HTTP/1.1\r\nHost: x\r\n\r\n" +
		"GET /big.bin HTTP/1.1\r\nHost: x\r\nRange: bytes=5-1000004\r\n\r\n" +
		"GET /data.json HTTP/1.1\r\nHost: x\r\n\r\n" +
		"GET /big.bin HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
	if _, err := io.WriteString(c, reqs); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	for i, want := range [][]byte{tr.big, []byte("0123456789abcdefghijklmnopqrstuvwxyz\n"), tr.big[5:1000005], tr.json, tr.big} {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("response %d: %v", i, err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || !bytes.Equal(b, want) {
			t.Fatalf("response %d: %d, %d bytes (%v), want %d", i, resp.StatusCode, len(b), err, len(want))
		}
	}
	if n, _ := br.Read(make([]byte, 1)); n != 0 {
		t.Error("bytes after the last response")
	}
}

// TestSendfileSlowReader: a client that reads slowly through a small
// receive window still gets the whole file (sendfile's partial sends and
// EAGAIN keep the offset), and one that stops reading is cut off by the
// Write timeout; no descriptor is left behind.
func TestSendfileSlowReader(t *testing.T) {
	testenv.CheckGoroutines(t)
	tr := makeTree(t)
	const writeTimeout = time.Second
	addr := serveFiles(t, tr, server.Options{Timeouts: server.Timeouts{Write: writeTimeout}})
	// The descriptors to come back to, once the server is surely up
	// (the loop opens its epoll set and ring when it starts).
	raw(t, addr, "GET /small.txt HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	fds := stableFDs(t)
	dial := func() *net.TCPConn {
		// The small receive buffer is set before the connect: shrunk
		// afterwards, the window the server already saw would close
		// and the transfer wait on zero-window probes.
		d := net.Dialer{Timeout: testTimeout, Control: func(_, _ string, rc syscall.RawConn) error {
			return rc.Control(func(fd uintptr) {
				syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4<<10)
			})
		}}
		c, err := d.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		tc := c.(*net.TCPConn)
		tc.SetDeadline(time.Now().Add(testTimeout))
		return tc
	}
	slow := dial()
	defer slow.Close()
	fmt.Fprintf(slow, "GET /big.bin HTTP/1.1\r\nHost: x\r\n\r\n")
	br := bufio.NewReaderSize(slow, 4<<10)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	buf := make([]byte, 64<<10)
	for i := 0; got.Len() < len(tr.big) && i < 10000; i++ {
		n, err := resp.Body.Read(buf)
		got.Write(buf[:n])
		if err != nil {
			break
		}
		if i%50 == 0 {
			time.Sleep(20 * time.Millisecond) // well under the Write timeout
		}
	}
	if !bytes.Equal(got.Bytes(), tr.big) {
		t.Fatalf("slow reader: %d bytes of %d, or different", got.Len(), len(tr.big))
	}
	// A client that never reads: the server gives up after the Write
	// timeout (it may take a second one while the socket buffers fill).
	stuck := dial()
	defer stuck.Close()
	fmt.Fprintf(stuck, "GET /big.bin HTTP/1.1\r\nHost: x\r\n\r\n")
	time.Sleep(4 * writeTimeout)
	stuck.SetReadDeadline(time.Now().Add(testTimeout))
	n, _ := io.Copy(io.Discard, stuck)
	if n >= int64(len(tr.big)) {
		t.Errorf("a client that did not read got all %d bytes: the Write timeout did not cut it", n)
	}
	stuck.Close()
	slow.Close()
	testnet.Poll(testTimeout, func() bool { return testenv.OpenFDs(t) <= fds })
	if now := testenv.OpenFDs(t); now > fds {
		ents, _ := os.ReadDir("/proc/self/fd")
		var names []string
		for _, e := range ents {
			l, _ := os.Readlink("/proc/self/fd/" + e.Name())
			names = append(names, e.Name()+"->"+l)
		}
		t.Errorf("%d descriptors open, %d before: %v", now, fds, names)
	}
}

// stableFDs is the number of open descriptors once it stops changing
// (connections closing in the background), within a bound.
func stableFDs(t *testing.T) int {
	n, same := testenv.OpenFDs(t), 0
	for i := 0; i < 100 && same < 4; i++ {
		time.Sleep(25 * time.Millisecond)
		if m := testenv.OpenFDs(t); m == n {
			same++
		} else {
			n, same = m, 0
		}
	}
	return n
}
