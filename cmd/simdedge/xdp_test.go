package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cilium/ebpf"

	"github.com/simdedge/simdedge/internal/testenv"
	"github.com/simdedge/simdedge/xdp"
	"github.com/simdedge/simdedge/xdp/xdptest"
)

// The XDP end-to-end tests build the simdedge binary, run it with the xdp
// transport in the server namespace of a veth pair (ip netns exec), and
// talk to it from the client namespace: the datagram client on the UDP
// port, curl and net/http on the TCP port (the gVisor stack).

const (
	xdpTCPPort = 8080
	xdpUDPPort = 8081
	// startWait bounds how long the binary may take to report it serves,
	// stopWait how long it may take to exit after SIGTERM.
	startWait = 30 * time.Second
	stopWait  = 15 * time.Second
	bigBody   = 1 << 20
)

// buildSimdedge builds the binary into a directory every user may read (the
// unprivileged-user test runs it too).
func buildSimdedge(t *testing.T) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(os.Getenv("GOROOT"), "bin", "go")
	}
	dir, err := os.MkdirTemp("", "simdedge-xdp-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "simdedge")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, goBin, "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// xdpConfig is a configuration with one xdp listener on iface. Its rings
// are smaller than the default frames (4096) need, so receive frames wait
// in the spare list and transmit frames for ring slots: the paths a
// default configuration never takes.
func xdpConfig(t *testing.T, dir, iface, mode string) string {
	t.Helper()
	cfg := fmt.Sprintf(`listeners:
  - transport: xdp
    xdp:
      interface: %s
      address: %s
      tcp_port: %d
      udp_port: %d
      mode: %s
      ring_size: 256
limits:
  max_body_bytes: %d
routes:
  - match: {path_prefix: /healthz}
    respond: {status: 200, body: "ok\n"}
  - match: {path_prefix: /big}
    respond: {status: 200, body: "%s"}
  - match: {path_prefix: /echo}
    echo: {}
`, iface, xdptest.Addr(xdptest.ServerIP), xdpTCPPort, xdpUDPPort, mode, 4*bigBody, strings.Repeat("b", bigBody))
	p := filepath.Join(dir, "xdp.yaml")
	if err := os.WriteFile(p, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// simdedgeProc is the binary running in the server namespace.
type simdedgeProc struct {
	cmd    *exec.Cmd
	stderr *syncBuffer
	done   chan error
}

// startSimdedge runs `simdedge serve -config cfg` in ns and waits for its
// "serving" log line. It fails the test if the binary exits first.
func startSimdedge(t *testing.T, bin, ns, cfg string) *simdedgeProc {
	t.Helper()
	p := &simdedgeProc{stderr: &syncBuffer{}, done: make(chan error, 1)}
	p.cmd = exec.Command("ip", "netns", "exec", ns, bin, "serve", "-config", cfg)
	pr, pw := io.Pipe()
	p.cmd.Stderr = pw
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	serving := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(pr)
		once := false
		for sc.Scan() {
			p.stderr.Write(append(sc.Bytes(), '\n'))
			if !once && strings.Contains(sc.Text(), `"msg":"serving"`) {
				once = true
				close(serving)
			}
		}
	}()
	go func() { err := p.cmd.Wait(); pw.Close(); p.done <- err }()
	t.Cleanup(func() {
		// Still running means the test failed before SIGTERM.
		if p.cmd.ProcessState == nil {
			p.cmd.Process.Kill()
			select {
			case <-p.done:
			case <-time.After(stopWait):
			}
		}
	})
	select {
	case <-serving:
	case err := <-p.done:
		p.done <- err
		t.Fatalf("simdedge exited before serving (%v):\n%s", err, p.stderr.String())
	case <-time.After(startWait):
		t.Fatalf("simdedge did not start serving:\n%s", p.stderr.String())
	}
	return p
}

// stop sends SIGTERM and returns the exit error.
func (p *simdedgeProc) stop(t *testing.T) error {
	t.Helper()
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-p.done:
		return err
	case <-time.After(stopWait):
		t.Fatalf("simdedge did not exit after SIGTERM:\n%s", p.stderr.String())
		return nil
	}
}

// xdpProgramID returns the ID of the XDP program attached to the server's
// interface, 0 if none.
func xdpProgramID(t *testing.T, v *xdptest.Veth) int {
	t.Helper()
	out, err := xdptest.Run("ip", "-n", v.ServerNS, "-d", "link", "show", "dev", v.ServerIf)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`prog/xdp id (\d+)`).FindStringSubmatch(out)
	if m == nil {
		return 0
	}
	id, _ := strconv.Atoi(m[1])
	return id
}

func TestXDPServe(t *testing.T) {
	for _, mode := range []string{"native", "generic"} {
		t.Run(mode, func(t *testing.T) { testXDPServe(t, mode) })
	}
}

func testXDPServe(t *testing.T, mode string) {
	v := xdptest.NewVeth(t)
	if mode == "generic" {
		// In generic mode the kernel hands XDP whole GSO super-frames
		// from the client; the userspace stack wants wire-sized segments.
		if _, err := xdptest.Run("ip", "netns", "exec", v.ClientNS, "ethtool", "-K", v.ClientIf, "tso", "off", "gso", "off"); err != nil {
			t.Fatal(err)
		}
	}
	bin := buildSimdedge(t)
	p := startSimdedge(t, bin, v.ServerNS, xdpConfig(t, t.TempDir(), v.ServerIf, mode))
	progID := xdpProgramID(t, v)
	if progID == 0 {
		t.Fatal("no XDP program attached while serving")
	}
	srv := xdptest.Addr(v.ServerIP)
	base := fmt.Sprintf("http://%s:%d", srv, xdpTCPPort)

	t.Run("datagram", func(t *testing.T) {
		var c *xdp.DatagramClient
		if err := xdptest.InNS(v.ClientNS, func() (err error) {
			c, err = xdp.DialDatagram(fmt.Sprintf("%s:%d", srv, xdpUDPPort))
			return err
		}); err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		// Datagrams are not retransmitted: the first healthz may try a few
		// times (at most 10 of 300 ms) while the path settles after attach.
		c.Timeout = 300 * time.Millisecond
		raw, err := c.RoundTrip([]byte("GET /healthz HTTP/1.1\r\nHost: edge\r\n\r\n"))
		for try := 2; err != nil && try <= 10; try++ {
			raw, err = c.RoundTrip([]byte("GET /healthz HTTP/1.1\r\nHost: edge\r\n\r\n"))
		}
		c.Timeout = time.Second
		if err != nil || !bytes.HasPrefix(raw, []byte("HTTP/1.1 200 ")) || !bytes.HasSuffix(raw, []byte("\r\n\r\nok\n")) {
			t.Fatalf("healthz: %v %q", err, raw)
		}
		raw, err = c.RoundTrip([]byte("POST /echo HTTP/1.1\r\nHost: edge\r\nContent-Length: 5\r\n\r\nhello"))
		if err != nil || !bytes.Contains(raw, []byte(`"body_len":5`)) {
			t.Fatalf("echo: %v %q", err, raw)
		}
		if raw, err = c.RoundTrip([]byte("GET /big HTTP/1.1\r\nHost: edge\r\n\r\n")); !errors.Is(err, xdp.ErrUseTCP) {
			t.Fatalf("1 MiB over a datagram: %v %q, want ErrUseTCP", err, raw)
		}
	})

	t.Run("curl", func(t *testing.T) {
		curl := testenv.Command(t, "curl")
		out, err := xdptest.Run("ip", "netns", "exec", v.ClientNS, curl, "-sS", "--max-time", "15", base+"/healthz")
		if err != nil || out != "ok\n" {
			t.Fatalf("curl: %v %q", err, out)
		}
		out, err = xdptest.Run("ip", "netns", "exec", v.ClientNS, curl, "-sS", "--max-time", "15", "-o", "/dev/null",
			"-w", "%{http_code} %{size_download}", base+"/big")
		if err != nil || out != fmt.Sprintf("200 %d", bigBody) {
			t.Fatalf("curl 1 MiB download: %v %q", err, out)
		}
	})

	t.Run("net/http", func(t *testing.T) {
		dials := 0
		tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (c net.Conn, err error) {
			dials++
			err = xdptest.InNS(v.ClientNS, func() (err error) { c, err = (&net.Dialer{}).DialContext(ctx, network, addr); return err })
			return c, err
		}}
		defer tr.CloseIdleConnections()
		hc := &http.Client{Transport: tr, Timeout: 20 * time.Second}
		for i := range 3 { // keep-alive: one connection
			if code, body := fetch(t, hc, "GET", base+"/healthz", ""); code != 200 || body != "ok\n" {
				t.Fatalf("request %d: %d %q", i, code, body)
			}
		}
		code, body := fetch(t, hc, "POST", base+"/echo", strings.Repeat("u", bigBody))
		if code != 200 || !strings.Contains(body, fmt.Sprintf(`"body_len":%d`, bigBody)) {
			t.Fatalf("1 MiB upload: %d %.200q", code, body)
		}
		if code, body := fetch(t, hc, "GET", base+"/big", ""); code != 200 || len(body) != bigBody {
			t.Fatalf("1 MiB download: %d, %d bytes", code, len(body))
		}
		if dials != 1 {
			t.Errorf("%d connections for sequential requests, want 1 (keep-alive)", dials)
		}
	})

	t.Run("pipelined and strict", func(t *testing.T) {
		var c net.Conn
		if err := xdptest.InNS(v.ClientNS, func() (err error) {
			c, err = net.DialTimeout("tcp4", fmt.Sprintf("%s:%d", srv, xdpTCPPort), 10*time.Second)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(20 * time.Second))
		req := "GET /healthz HTTP/1.1\r\nHost: edge\r\n\r\n"
		if _, err := io.WriteString(c, req+req+req); err != nil {
			t.Fatal(err)
		}
		br := bufio.NewReader(c)
		for i := range 3 {
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("pipelined response %d: %v", i, err)
			}
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != 200 || string(b) != "ok\n" {
				t.Fatalf("pipelined response %d: %d %q", i, resp.StatusCode, b)
			}
		}
		// Content-Length with Transfer-Encoding is a smuggling risk: 400.
		io.WriteString(c, "POST /echo HTTP/1.1\r\nHost: edge\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n")
		resp, err := http.ReadResponse(br, nil)
		if err != nil || resp.StatusCode != 400 {
			t.Fatalf("CL+TE: %v %v, want 400", resp, err)
		}
	})

	t.Run("kernel keeps ARP and ICMP", func(t *testing.T) {
		xdptest.Run("ip", "-n", v.ClientNS, "neigh", "flush", "dev", v.ClientIf)
		if err := v.Ping(srv); err != nil {
			t.Fatal(err)
		}
	})

	if err := p.stop(t); err != nil {
		t.Fatalf("exit after SIGTERM: %v\n%s", err, p.stderr.String())
	}
	if !strings.Contains(p.stderr.String(), `"msg":"xdp detached"`) {
		t.Errorf("no detach log:\n%s", p.stderr.String())
	}
	if id := xdpProgramID(t, v); id != 0 {
		t.Fatalf("XDP program %d still attached after SIGTERM", id)
	}
	// No bpf_link or map keeps the program alive: it is gone.
	if prog, err := ebpf.NewProgramFromID(ebpf.ProgramID(progID)); err == nil {
		prog.Close()
		t.Fatalf("program %d still loaded after exit", progID)
	}
}

// TestXDPServeErrors: simdedge explains why XDP cannot start and exits 1.
func TestXDPServeErrors(t *testing.T) {
	v := xdptest.NewVeth(t)
	bin := buildSimdedge(t)
	// The unprivileged run must read the configuration: a directory of
	// its own, readable by all.
	dir, err := os.MkdirTemp("", "simdedge-xdp-cfg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	serve := func(t *testing.T, cfg string, prefix ...string) (int, string) {
		t.Helper()
		args := append(append([]string{"netns", "exec", v.ServerNS}, prefix...), bin, "serve", "-config", cfg)
		ctx, cancel := context.WithTimeout(context.Background(), startWait)
		defer cancel()
		out, err := exec.CommandContext(ctx, "ip", args...).CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("simdedge did not exit with an error (%v):\n%s", err, out)
		}
		return ee.ExitCode(), string(out)
	}
	cases := []struct {
		name, iface, mode string
		setup             []string // a command run first in the server namespace
		prefix            []string
		want              string
	}{
		{name: "missing interface", iface: "nosuchif0", mode: "native", want: "no such network interface"},
		{name: "driver without native XDP", iface: "sxbridge0", mode: "native",
			setup: []string{"ip", "link", "add", "sxbridge0", "type", "bridge"}, want: "does not support native XDP (set mode: generic)"},
		{name: "not root", iface: v.ServerIf, mode: "native",
			prefix: []string{"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"},
			want:   "permission denied: run as root, or with CAP_BPF, CAP_NET_ADMIN and CAP_NET_RAW (missing CAP_BPF, CAP_NET_ADMIN, CAP_NET_RAW)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.prefix != nil {
				testenv.Command(t, c.prefix[0])
			}
			if c.setup != nil {
				if _, err := xdptest.Run("ip", append([]string{"netns", "exec", v.ServerNS}, c.setup...)...); err != nil {
					t.Fatal(err)
				}
			}
			cfg := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-")+".yaml")
			os.WriteFile(cfg, []byte(fmt.Sprintf("listeners:\n  - transport: xdp\n    xdp: {interface: %s, address: %s, udp_port: %d, mode: %s}\nroutes:\n  - match: {path_prefix: /}\n    respond: {status: 200}\n",
				c.iface, xdptest.Addr(xdptest.ServerIP), xdpUDPPort, c.mode)), 0o644)
			code, out := serve(t, cfg, c.prefix...)
			if code != 1 || !strings.Contains(out, "simdedge: cannot start xdp listener on "+c.iface+": ") || !strings.Contains(out, c.want) {
				t.Fatalf("exit %d, output:\n%s\nwant exit 1 and %q", code, out, c.want)
			}
		})
	}
}
