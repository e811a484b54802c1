package netstack_test

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// vethTimeout bounds each client operation of the veth tests.
const vethTimeout = 15 * time.Second

// TestVeth serves HTTP through AF_XDP and the userspace stack on a veth
// pair, in native and generic XDP mode, to real clients in another
// namespace: curl and net/http (keep-alive, pipelining, 1 MiB both ways,
// strict-parsing rejections).
func TestVeth(t *testing.T) {
	for _, mode := range []struct {
		name    string
		generic bool
	}{{"native", false}, {"generic", true}} {
		t.Run(mode.name, func(t *testing.T) {
			v := newVeth(t, mode.generic)
			addr := vethServerAddr.String() + ":8081"
			startHelper(t, v, helperOpts{xdpAt: addr, generic: mode.generic, cpu: -1})
			base := "http://" + addr
			t.Run("curl", func(t *testing.T) { testCurl(t, v, base) })
			t.Run("nethttp", func(t *testing.T) { testNetHTTP(t, v, base) })
			t.Run("pipelined", func(t *testing.T) { testPipelined(t, v, addr) })
			t.Run("strict", func(t *testing.T) { testStrict(t, v, addr) })
		})
	}
}

func testCurl(t *testing.T, v *veth, base string) {
	// Two URLs in one curl run share one keep-alive connection:
	// num_connects is 1 for the first transfer and 0 for the second.
	out, err := v.curl(t, "-w", " connects=%{num_connects}\n", base+"/a", base+"/b")
	if err != nil {
		t.Fatal(err)
	}
	if want := "GET /a 0 connects=1\nGET /b 0 connects=0\n"; out != want {
		t.Errorf("curl keep-alive: got %q, want %q", out, want)
	}
	// 1 MiB up, echoed back.
	dir := t.TempDir()
	body := bytes.Repeat([]byte("simdedge/netstack"), (1<<20)/17+1)[:1<<20]
	in, got := filepath.Join(dir, "in"), filepath.Join(dir, "out")
	if err := os.WriteFile(in, body, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := v.curl(t, "--data-binary", "@"+in, "-o", got, base+"/raw"); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(got); err != nil || !bytes.Equal(b, body) {
		t.Errorf("curl 1 MiB echo: got %d bytes (err %v), want the %d sent", len(b), err, len(body))
	}
}

func testNetHTTP(t *testing.T, v *veth, base string) {
	c := &http.Client{Timeout: vethTimeout, Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, addr string) (net.Conn, error) { return v.dial(ctx, addr) },
	}}
	defer c.CloseIdleConnections()
	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	var reused atomic.Int32
	ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) {
		if i.Reused {
			reused.Add(1)
		}
	}})
	const rounds = 3
	for i := range rounds {
		req, _ := http.NewRequestWithContext(ctx, "POST", base+"/raw", bytes.NewReader(big))
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("round %d: %v", i, err)
		}
		got, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || !bytes.Equal(got, big) {
			t.Fatalf("round %d: %d bytes back (err %v), want %d", i, len(got), err, len(big))
		}
	}
	if n := reused.Load(); n != rounds-1 {
		t.Errorf("%d of %d requests reused the connection, want %d", n, rounds, rounds-1)
	}
}

func vethConn(t *testing.T, v *veth, addr string) (net.Conn, *bufio.Reader) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), vethTimeout)
	defer cancel()
	c, err := v.dial(ctx, addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(vethTimeout))
	return c, bufio.NewReader(c)
}

func readResponse(t *testing.T, br *bufio.Reader) (*http.Response, string) {
	t.Helper()
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

func testPipelined(t *testing.T, v *veth, addr string) {
	c, br := vethConn(t, v, addr)
	io.WriteString(c, "GET /one HTTP/1.1\r\nHost: x\r\n\r\nPOST /two HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc")
	for _, want := range []string{"GET /one 0", "POST /two 3"} {
		if resp, body := readResponse(t, br); resp.StatusCode != 200 || body != want {
			t.Errorf("got %d %q, want 200 %q", resp.StatusCode, body, want)
		}
	}
}

func testStrict(t *testing.T, v *veth, addr string) {
	for _, tc := range []struct{ name, req string }{
		{"obs-fold", "GET / HTTP/1.1\r\nHost: x\r\nX: a\r\n b\r\n\r\n"},
		{"bad Content-Length", "POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 1x\r\n\r\nabc"},
	} {
		t.Run(strings.ReplaceAll(tc.name, " ", "_"), func(t *testing.T) {
			c, br := vethConn(t, v, addr)
			io.WriteString(c, tc.req)
			resp, _ := readResponse(t, br)
			if resp.StatusCode != 400 || !resp.Close {
				t.Errorf("got %d close=%v, want 400 and Connection: close", resp.StatusCode, resp.Close)
			}
			if b, err := br.ReadByte(); err == nil {
				t.Errorf("connection still open: read %q", b)
			} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
				t.Error("connection not closed")
			}
		})
	}
}
