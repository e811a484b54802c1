package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

func TestSameAddr(t *testing.T) {
	any6 := &net.TCPAddr{IP: net.IPv6unspecified, Port: 80}
	any4 := &net.TCPAddr{IP: net.IPv4zero, Port: 80}
	lo := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}
	for _, c := range []struct {
		addr string
		got  *net.TCPAddr
		want bool
	}{
		{":80", any6, true},
		{":80", any4, true},
		{"0.0.0.0:80", any6, true},
		{"[::]:80", any4, true},
		{":81", any6, false},
		{"127.0.0.1:80", any6, false}, // a specific address is not the wildcard
		{"127.0.0.1:8080", lo, true},
		{"127.0.0.2:8080", lo, false},
		{"localhost:8080", lo, true},
		{"127.0.0.1:0", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)}, false}, // port 0 asks for a fresh port
		{"no-port", lo, false},
		{"127.0.0.1:http", lo, false},
	} {
		if got := sameAddr(c.addr, c.got); got != c.want {
			t.Errorf("sameAddr(%q, %v) = %v, want %v", c.addr, c.got, got, c.want)
		}
	}
}

// TestTakeInheritedEnv: the variables are read only when LISTEN_PID names
// this process, are unset afterwards, and bad values are refused.
func TestTakeInheritedEnv(t *testing.T) {
	me := strconv.Itoa(os.Getpid())
	for _, c := range []struct {
		pid, fds, names string
		err             error
	}{
		{"", "1", "", nil},  // not activated
		{"1", "1", "", nil}, // meant for another process (pid 1)
		{me, "0", "", nil},  // activated with no sockets
		{me, "", "", nil},   // LISTEN_FDS unset: none, as sd_listen_fds says
		{me, "x", "", errListenFDs},
		{me, "-1", "", errListenFDs},
		{me, "100000", "", errListenFDs},
		{me, "0", "a:b", errListenFDNameLen},
	} {
		t.Setenv("LISTEN_PID", c.pid)
		t.Setenv("LISTEN_FDS", c.fds)
		t.Setenv("LISTEN_FDNAMES", c.names)
		s, err := takeInherited()
		if !errors.Is(err, c.err) {
			t.Errorf("pid %q fds %q names %q: err %v, want %v", c.pid, c.fds, c.names, err, c.err)
		}
		if s != nil && len(s.socks) != 0 {
			t.Errorf("pid %q fds %q: %d sockets, want none", c.pid, c.fds, len(s.socks))
		}
		for _, v := range []string{"LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"} {
			if _, set := os.LookupEnv(v); set {
				t.Errorf("%s still set after takeInherited", v)
			}
		}
	}
}

// TestFileListener: a listening TCP socket becomes a *net.TCPListener; a
// UDP socket and a connected TCP socket are refused by name.
func TestFileListener(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	tl, err := fileListener(dupFD(t, ln.(*net.TCPListener)), "web")
	if err != nil {
		t.Fatal(err)
	}
	if tl.Addr().String() != ln.Addr().String() {
		t.Errorf("inherited listener on %s, want %s", tl.Addr(), ln.Addr())
	}
	tl.Close()

	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	if _, err := fileListener(dupFD(t, pc.(*net.UDPConn)), "udp"); !errors.Is(err, errNotTCPListener) {
		t.Errorf("udp socket: err %v, want %v", err, errNotTCPListener)
	}
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := fileListener(dupFD(t, c.(*net.TCPConn)), "conn"); !errors.Is(err, errNotTCPListener) {
		t.Errorf("connected socket: err %v, want %v", err, errNotTCPListener)
	}
}

// dupFD returns a duplicate of c's descriptor, which fileListener closes.
func dupFD(t *testing.T, c interface{ File() (*os.File, error) }) int {
	t.Helper()
	f, err := c.File()
	if err != nil {
		t.Fatal(err)
	}
	fd, err := syscall.Dup(int(f.Fd()))
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	return fd
}

// Bounds of the restart test.
const (
	// restartClients connection attempts run at once; each loop stops
	// after restartMax attempts or restartWait.
	restartClients = 4
	restartMax     = 20000
	restartWait    = 60 * time.Second
	// restartGap is how long no process serves between the first one's
	// exit and the second one's start (systemd's restart takes about as
	// long); restartBefore/After: answered requests wanted before the
	// restart and after the second process serves.
	restartGap    = 300 * time.Millisecond
	restartBefore = 100
	restartAfter  = 100
)

// TestSocketActivationRestart emulates systemd's socket activation: the
// test holds the listening socket and passes it to the binary as
// descriptor 3 (LISTEN_FDS=1, LISTEN_PID set to the child's own pid by a
// shell that execs it). Under a bounded loop of new connections it stops
// the server (SIGTERM), waits restartGap with no server running, and
// starts a second one on the same socket: no connection may be refused
// and every request must be answered 200 (those that arrived during the
// gap wait in the socket's queue, and those the first server accepted as
// it began to drain are answered by it). The control, "bound", restarts a server
// that binds its own socket the same way, and must see refusals: that
// shows the clients would notice a lost socket. On each engine and proxy
// path.
func TestSocketActivationRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("sh not found: it sets LISTEN_PID to the pid it execs the server with")
	}
	bin := buildBinary(t)
	for _, e := range []struct{ name, engine, onLoop string }{
		{"goroutine", "goroutine", "false"},
		{"loop", "loop", "false"},
		{"loop-proxy", "loop", "true"},
	} {
		t.Run(e.name, func(t *testing.T) {
			r := testRestart(t, sh, bin, e.engine, e.onLoop, true)
			if r.refused != 0 {
				t.Errorf("with socket activation: %d connections refused; want none", r.refused)
			}
			// A connection the first server accepted just before its
			// drain began is answered too (server sparedFresh).
			if r.failed != 0 {
				t.Errorf("with socket activation: %d requests failed (first: %v); want none", r.failed, r.firstErr)
			}
			if r.gapProbes != restartClients {
				t.Errorf("%d of %d requests sent while no server ran were answered, want all", r.gapProbes, restartClients)
			}
			t.Logf("%d requests answered, %d of the clients' and %d probes waited while no server ran", r.ok, r.inGap, r.gapProbes)
		})
	}
	t.Run("bound", func(t *testing.T) {
		r := testRestart(t, sh, bin, "goroutine", "false", false)
		if r.refused == 0 {
			t.Errorf("without socket activation no connection was refused across the restart: the test cannot tell")
		}
		t.Logf("without socket activation: %d refused, %d answered", r.refused, r.ok)
	})
}

type restartResult struct {
	ok, refused, failed, inGap int64
	firstErr                   error
	// gapProbes: requests the test sent while no server ran that were
	// answered once the second one started.
	gapProbes int
}

func testRestart(t *testing.T, sh, bin, engine, onLoop string, activated bool) restartResult {
	origin := startOriginHTTP(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	var sock *os.File
	if activated {
		// The test keeps a descriptor of the socket, as systemd does.
		if sock, err = ln.(*net.TCPListener).File(); err != nil {
			t.Fatal(err)
		}
		defer sock.Close()
	}
	ln.Close()
	file := filepath.Join(t.TempDir(), "c.yaml")
	writeFile(t, file, fmt.Sprintf(`listen: %q
engine: %s
proxy_on_loop: %s
upstreams:
  - name: app
    targets: [%q]
routes:
  - match: {path_prefix: /static}
    respond: {status: 200, body: "ok\n"}
  - match: {path_prefix: /api}
    proxy: {upstream: app}
`, addr, engine, onLoop, origin))

	start := func() (*exec.Cmd, *syncBuffer, func()) {
		// sh exports its own pid and execs the server, which keeps it.
		cmd := exec.Command(sh, "-c", `export LISTEN_PID=$$; exec "$0" "$@"`, bin, "serve", "-config", file)
		cmd.Env = os.Environ()
		if activated {
			cmd.ExtraFiles = []*os.File{sock} // descriptor 3
			cmd.Env = append(cmd.Env, "LISTEN_FDS=1", "LISTEN_FDNAMES=web")
		}
		return startCmd(t, cmd)
	}
	first, logs1, stop1 := start()
	c := &http.Client{Timeout: binWait, Transport: &http.Transport{DisableKeepAlives: true}}
	defer c.CloseIdleConnections()
	waitServing(t, c, "http://"+addr+"/static", logs1)

	var r restartResult
	// exited and restarted: Unix nanoseconds when the first server had
	// exited and when the second was started (0: not yet); the clients'
	// requests that span both waited in the queue (logged).
	var exited, restarted atomic.Int64
	var errMu sync.Mutex
	quit := make(chan struct{})
	var wg sync.WaitGroup
	deadline := time.Now().Add(restartWait)
	for w := range restartClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < restartMax && time.Now().Before(deadline); i++ {
				select {
				case <-quit:
					return
				default:
				}
				began := time.Now().UnixNano()
				path := "/static"
				if (w+i)%2 == 1 {
					path = "/api/x"
				}
				resp, err := c.Get("http://" + addr + path)
				if err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != 200 {
						err = fmt.Errorf("status %d", resp.StatusCode)
					}
				}
				switch {
				case err == nil:
					atomic.AddInt64(&r.ok, 1)
					// Begun before the first server was gone and
					// answered after the second started: it waited in
					// the socket's queue while no server ran.
					if e, s := exited.Load(), restarted.Load(); e != 0 && began < e && s != 0 && time.Now().UnixNano() > s {
						atomic.AddInt64(&r.inGap, 1)
					}
				case errors.Is(err, syscall.ECONNREFUSED):
					atomic.AddInt64(&r.refused, 1)
					time.Sleep(time.Millisecond) // nothing listens: do not spin
				default:
					atomic.AddInt64(&r.failed, 1)
					errMu.Lock()
					if r.firstErr == nil {
						r.firstErr = err
					}
					errMu.Unlock()
				}
			}
		}()
	}
	waitCount(t, &r.ok, restartBefore)
	stop1()
	if code := first.ProcessState.ExitCode(); code != 0 {
		t.Errorf("first server exited with %d; log: %s", code, logs1.String())
	}
	exited.Store(time.Now().UnixNano())
	// Probes sent while certainly no server runs: with the socket held
	// they wait in its queue and must be answered by the second server.
	probes := make(chan error, restartClients)
	for range restartClients {
		go func() {
			resp, err := c.Get("http://" + addr + "/static")
			if err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					err = fmt.Errorf("status %d", resp.StatusCode)
				}
			}
			probes <- err
		}()
	}
	time.Sleep(restartGap)
	restarted.Store(time.Now().UnixNano())
	_, logs2, stop2 := start()
	for range restartClients {
		if err := <-probes; err == nil {
			r.gapProbes++
		} else if errors.Is(err, syscall.ECONNREFUSED) {
			atomic.AddInt64(&r.refused, 1)
		} else {
			atomic.AddInt64(&r.failed, 1)
		}
	}
	after := atomic.LoadInt64(&r.ok)
	waitCount(t, &r.ok, after+restartAfter)
	close(quit)
	wg.Wait()
	stop2()
	if !strings.Contains(logs2.String(), `"msg":"stopped"`) {
		t.Errorf("second server did not stop cleanly: %s", logs2.String())
	}
	return r
}

// waitCount waits until *n reaches want, within restartWait.
func waitCount(t *testing.T, n *int64, want int64) {
	t.Helper()
	deadline := time.Now().Add(restartWait)
	for atomic.LoadInt64(n) < want {
		if time.Now().After(deadline) {
			t.Fatalf("only %d requests answered in %s, want %d", atomic.LoadInt64(n), restartWait, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// heldSocket opens a listening socket on loopback and returns its address
// and a descriptor of it, which the test keeps (as systemd does).
func heldSocket(t *testing.T) (string, *os.File) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	f, err := ln.(*net.TCPListener).File()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return ln.Addr().String(), f
}

// TestSocketActivationReload: of two passed sockets, the configuration
// serves one; the other is logged as unused and kept, and a reload that
// adds a listener on its address serves it (binding the address itself
// would fail: the socket is held). On each engine.
func TestSocketActivationReload(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("sh not found: it sets LISTEN_PID to the pid it execs the server with")
	}
	bin := buildBinary(t)
	for _, engine := range []string{"goroutine", "loop"} {
		t.Run(engine, func(t *testing.T) {
			a, fa := heldSocket(t)
			b, fb := heldSocket(t)
			file := filepath.Join(t.TempDir(), "c.yaml")
			conf := func(addrs ...string) string {
				s := "engine: " + engine + "\nlisteners:\n"
				for _, x := range addrs {
					s += fmt.Sprintf("  - {transport: tcp, address: %q}\n", x)
				}
				return s + routeV("v")
			}
			writeFile(t, file, conf(a))
			cmd := exec.Command(sh, "-c", `export LISTEN_PID=$$; exec "$0" "$@"`, bin, "serve", "-config", file)
			cmd.Env = append(os.Environ(), "LISTEN_FDS=2", "LISTEN_FDNAMES=a:b")
			cmd.ExtraFiles = []*os.File{fa, fb}
			cmd, logs, _ := startCmd(t, cmd)
			c := &http.Client{Timeout: binWait, Transport: &http.Transport{DisableKeepAlives: true}}
			waitServing(t, c, "http://"+a+"/v", logs)
			waitLog(t, logs, `"msg":"a socket passed by systemd matches no listener of the configuration","name":"b"`)
			writeFile(t, file, conf(a, b))
			cmd.Process.Signal(syscall.SIGHUP) // by PID: the process this test started
			waitServing(t, c, "http://"+b+"/v", logs)
			waitLog(t, logs, `"msg":"reloaded"`)
		})
	}
}

// waitLog waits until the server's log (copied from its stderr by another
// goroutine, so a moment behind the server) contains want.
func waitLog(t *testing.T, logs *syncBuffer, want string) {
	t.Helper()
	deadline := time.Now().Add(binWait)
	for !strings.Contains(logs.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("the log has no %s: %s", want, logs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}
