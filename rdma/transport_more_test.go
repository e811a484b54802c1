//go:build rdma && cgo

package rdma_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/simdedge/simdedge/rdma"
	"github.com/simdedge/simdedge/server"
)

// waitFor polls cond for up to 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after 10 s: %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestTransportDisconnect: a client that goes away while its request is
// being served, and a server that goes away while a client waits. Both
// ends get a clear error, nothing hangs, and every endpoint and region is
// freed.
func TestTransportDisconnect(t *testing.T) {
	needTransport(t)
	base := rdma.Stats()
	entered := make(chan struct{}, 1)
	unblock := make(chan struct{})
	replyErr := make(chan error, 1)
	h := server.HandlerFunc(func(w *server.ResponseWriter, r *server.Request) {
		if string(r.Target()) != "/block" {
			w.WriteString("ok")
			return
		}
		entered <- struct{}{}
		<-unblock
		w.WriteString("late")
		replyErr <- w.Flush()
	})
	ml, addr := startBackend(t, rdma.ListenConfig{Credits: 4, MessageSize: 2048}, h)

	// The client disconnects mid-request.
	c, err := rdma.Dial(addr, rdma.DialOptions{Credits: 4, MessageSize: 2048})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := wholeRoundTrip(c, []byte("GET /block HTTP/1.1\r\nHost: x\r\n\r\n"))
		done <- err
	}()
	<-entered
	c.Close()
	select {
	case err := <-done:
		if !errors.Is(err, rdma.ErrConnLost) {
			t.Errorf("RoundTrip after Close: %v, want ErrConnLost", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("RoundTrip still blocked 10 s after Close")
	}
	// The server notices: its connection closes, the late reply fails,
	// and the slot comes back once the handler returns.
	waitFor(t, "server connection closed", func() bool { return ml.Stats().Connected == 0 })
	if st := ml.Stats(); st.Open != 1 {
		t.Errorf("the connection's buffers were freed while a handler held one: %+v", st)
	}
	close(unblock)
	if err := <-replyErr; err == nil {
		t.Error("a reply to a client that disconnected succeeded")
	}
	waitFor(t, "server connection freed", func() bool { st := ml.Stats(); return st.Open == 0 && st.Held == 0 })

	// The server goes away while a client waits.
	c2 := dialClient(t, addr, rdma.DialOptions{Credits: 4, MessageSize: 2048})
	if _, err := wholeRoundTrip(c2, []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	unblock2 := make(chan struct{})
	entered2 := make(chan struct{}, 1)
	ml2, addr2 := startBackend(t, rdma.ListenConfig{Credits: 4, MessageSize: 2048}, server.HandlerFunc(func(w *server.ResponseWriter, r *server.Request) {
		entered2 <- struct{}{}
		<-unblock2
	}))
	c3 := dialClient(t, addr2, rdma.DialOptions{Credits: 4, MessageSize: 2048})
	go func() {
		_, err := wholeRoundTrip(c3, []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
		done <- err
	}()
	<-entered2
	ml2.Close()
	select {
	case err := <-done:
		if !errors.Is(err, rdma.ErrConnLost) {
			t.Errorf("RoundTrip when the server closed: %v, want ErrConnLost", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("RoundTrip still blocked 10 s after the server closed")
	}
	close(unblock2)
	if _, err := wholeRoundTrip(c3, []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")); !errors.Is(err, rdma.ErrConnLost) {
		t.Errorf("RoundTrip on a lost connection: %v, want ErrConnLost", err)
	}
	c2.Close()
	c3.Close()
	ml.Close()
	var st rdma.Counts
	freed := func() bool {
		st = rdma.Stats()
		return st.Endpoints == base.Endpoints && st.Regions == base.Regions && st.Listeners == base.Listeners
	}
	for deadline := time.Now().Add(10 * time.Second); !freed(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("after 10 s, endpoints and regions not freed: counts %+v, at the start %+v", st, base)
		}
	}
}

// TestTransport10000: 10,000 requests over four connections, some with
// bodies that go by rendezvous; afterwards no slot is held and every
// endpoint, region and posted operation is accounted for.
func TestTransport10000(t *testing.T) {
	needTransport(t)
	base := rdma.Stats()
	ml, addr := startBackend(t, rdma.ListenConfig{Credits: 8, MessageSize: 2048}, echoHandler)
	const conns, each = 4, 2500
	big := bodyPattern(5000) // larger than a message: rendezvous
	errs := make(chan error, conns)
	for g := range conns {
		go func() {
			c, err := rdma.Dial(addr, rdma.DialOptions{Credits: 8, MessageSize: 2048})
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			for i := range each {
				var req []byte
				if i%100 == 0 {
					req = append(fmt.Appendf(nil, "POST /%d HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n", i, len(big)), big...)
				} else {
					req = fmt.Appendf(nil, "GET /%d/%d HTTP/1.1\r\nHost: x\r\n\r\n", g, i)
				}
				resp, err := wholeRoundTrip(c, req)
				if err != nil {
					errs <- fmt.Errorf("conn %d request %d: %w", g, i, err)
					return
				}
				if !bytes.HasPrefix(resp, []byte("HTTP/1.1 200 ")) {
					errs <- fmt.Errorf("conn %d request %d: %.100q", g, i, resp)
					return
				}
			}
			if st := c.Stats(); st.Held != 0 || st.InFlight != 0 {
				errs <- fmt.Errorf("client %d after its requests: %+v", g, st)
				return
			}
			errs <- nil
		}()
	}
	for range conns {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "server connections freed", func() bool { st := ml.Stats(); return st.Open == 0 && st.Held == 0 })
	if st := ml.Stats(); st.Accepted != conns || st.Queued != 0 {
		t.Errorf("listener: %+v", st)
	}
	ml.Close()
	var st rdma.Counts
	back := func() bool {
		st = rdma.Stats()
		return st.Endpoints == base.Endpoints && st.Regions == base.Regions && st.Recvs == base.Recvs && st.Ops == base.Ops
	}
	for deadline := time.Now().Add(10 * time.Second); !back(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("after 10 s, objects not back to the baseline: counts %+v, at the start %+v", st, base)
		}
	}
}

// The two-process test re-runs the test binary as the backend
// (TestTransportBackendProcess with backendEnv set).
const backendEnv = "SIMDEDGE_RDMA_TRANSPORT_BACKEND"

// backendPollEnv passes the backend its poll mode ("block", "busy").
const backendPollEnv = "SIMDEDGE_RDMA_TRANSPORT_BACKEND_POLL"

func TestTransportBackendProcess(t *testing.T) {
	if os.Getenv(backendEnv) != "1" {
		return
	}
	poll, err := rdma.ParsePollMode(os.Getenv(backendPollEnv))
	if err != nil {
		fmt.Fprintln(os.Stderr, "backend:", err)
		os.Exit(1)
	}
	ml, err := rdma.ListenMessages(rdma.ListenConfig{Address: loopback + ":0", Credits: 32, MessageSize: 4096, Poll: poll, NoInline: noInline})
	if err != nil {
		fmt.Fprintln(os.Stderr, "backend:", err)
		os.Exit(1)
	}
	s := server.New(server.Options{Handler: echoHandler, Limits: server.Limits{MaxBodyBytes: 128 << 20}})
	fmt.Printf("addr %s\n", ml.Addr())
	go func() {
		// The parent closes stdin to stop the backend.
		bufio.NewReader(os.Stdin).ReadString('\n')
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.Shutdown(ctx)
	}()
	s.ServeMessages(ml)
	os.Exit(0)
}

// startBackendProcess runs TestTransportBackendProcess as a second
// process and returns it with its address; stop closes its stdin and
// waits for it to exit.
func startBackendProcess(tb testing.TB, poll rdma.PollMode) (cmd *exec.Cmd, addr string, stop func() error) {
	tb.Helper()
	cmd = exec.Command(os.Args[0], "-test.run=^TestTransportBackendProcess$", "-test.count=1")
	serve := "inline"
	if noInline {
		serve = "goroutine"
	}
	cmd.Env = append(os.Environ(), backendEnv+"=1", backendPollEnv+"="+poll.String(), serveEnv+"="+serve)
	cmd.Stderr = os.Stderr
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line := make(chan string, 1)
	go func() { s, _ := bufio.NewReader(stdout).ReadString('\n'); line <- s }()
	select {
	case s := <-line:
		var ok bool
		if addr, ok = strings.CutPrefix(strings.TrimSpace(s), "addr "); !ok {
			tb.Fatalf("backend printed %q", s)
		}
	case <-time.After(20 * time.Second):
		tb.Fatal("backend did not start in 20 s")
	}
	stop = func() error {
		stdin.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			return err
		case <-time.After(20 * time.Second):
			return errors.New("backend did not exit in 20 s")
		}
	}
	return cmd, addr, stop
}

func TestTransportTwoProcesses(t *testing.T) {
	needTransport(t)
	_, addr, stop := startBackendProcess(t, rdma.PollBlock)
	c := dialClient(t, addr, rdma.DialOptions{Credits: 8, MessageSize: 4096})
	for i := range 100 {
		resp, err := wholeRoundTrip(c, fmt.Appendf(nil, "GET /n%d HTTP/1.1\r\nHost: x\r\n\r\n", i))
		if err != nil || !bytes.Contains(resp, fmt.Appendf(nil, "GET /n%d 0", i)) {
			t.Fatalf("request %d: %q, %v", i, resp, err)
		}
	}
	body := bodyPattern(64 << 20)
	resp, err := wholeRoundTrip(c, append(fmt.Appendf(nil, "PUT /big HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n", len(body)), body...))
	sum := sha256.Sum256(body)
	if err != nil || string(responseBody(t, resp)) != fmt.Sprintf("PUT /big %d %x", len(body), sum[:4]) {
		t.Fatalf("64 MiB request: %.200q, %v", resp, err)
	}
	resp, err = wholeRoundTrip(c, []byte("GET /size/3000000 HTTP/1.1\r\nHost: x\r\n\r\n"))
	if err != nil || !bytes.Equal(responseBody(t, resp), bodyPattern(3000000)) {
		t.Fatalf("3 MB response: %d bytes, %v", len(resp), err)
	}
	// The backend exits: the client's next request fails cleanly.
	if err := stop(); err != nil {
		t.Fatalf("backend exit: %v", err)
	}
	if _, err := wholeRoundTrip(c, []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")); !errors.Is(err, rdma.ErrConnLost) {
		t.Errorf("request to an exited backend: %v, want ErrConnLost", err)
	}
}
