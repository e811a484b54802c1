//go:build rdma && cgo

package rdma_test

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/simdedge/simdedge/rdma"
	"github.com/simdedge/simdedge/server"
)

// declining is an Inliner that offers its handler for every request but
// those under /goroutine/: as the router does for respond and echo
// routes but not for proxied ones.
type declining struct{ server.Handler }

func (d declining) InlineHandler(r *server.Request) server.Handler {
	if strings.HasPrefix(string(r.Target()), "/goroutine/") {
		return nil
	}
	return d.Handler
}

// TestTransportInline: with the server's inline serve (the default), the
// requests an Inliner offers a handler for are served on the poller
// (Stats().Inlined counts them) and everything else — declined requests,
// chunked bodies, rendezvous requests, a handler that is no Inliner — goes
// through Receive; with NoInline nothing is inlined. Every answer is
// right either way, rendezvous responses (sent late, from a goroutine)
// and responses sent while the client's window is exhausted included.
func TestTransportInline(t *testing.T) {
	needTransport(t)
	ml, addr := startBackend(t, rdma.ListenConfig{Credits: 8, MessageSize: 4096}, declining{echoHandler})
	c := dialClient(t, addr, rdma.DialOptions{Credits: 4, MessageSize: 4096})
	want := func(n int) int {
		if noInline {
			return 0
		}
		return n
	}

	// 100 requests, every tenth answered by rendezvous (20,000 bytes).
	busyRequests(t, c, 100)
	if got := ml.Stats().Inlined; got != want(100) {
		t.Errorf("after 100 inline-capable requests: Inlined = %d, want %d", got, want(100))
	}
	// The ten rendezvous responses cannot be sent on the poller.
	if got := rdma.LateReplies(ml); got < int64(want(10)) || noInline && got != 0 {
		t.Errorf("late replies = %d, want at least %d", got, want(10))
	}

	// Declined, chunked and rendezvous requests go to goroutines.
	for i, req := range []string{
		"GET /goroutine/1 HTTP/1.1\r\nHost: x\r\n\r\n",
		"POST /chunked HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
		"POST /big HTTP/1.1\r\nHost: x\r\nContent-Length: 10000\r\n\r\n" + strings.Repeat("z", 10000),
	} {
		resp, err := wholeRoundTrip(c, []byte(req))
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		body := string(responseBody(t, resp))
		method, target, _ := strings.Cut(req, " ")
		target, _, _ = strings.Cut(target, " ")
		if !strings.HasPrefix(body, method+" "+target+" ") {
			t.Errorf("request %d: answer %q", i, body)
		}
	}
	if got := ml.Stats().Inlined; got != want(100) {
		t.Errorf("after declined, chunked and rendezvous requests: Inlined = %d, want %d", got, want(100))
	}
	chunked, err := wholeRoundTrip(c, []byte("POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"))
	if err != nil || string(responseBody(t, chunked)) != "POST /c 3 ba7816bf" {
		t.Errorf("chunked body: %v %q", err, chunked)
	}

	// 64 callers at once against a client window of 4: the server's
	// replies often find no credit and go out late, in order per request.
	callersDo(t, 64, 1, func(g, _ int) error {
		target := fmt.Sprintf("/p/%d", g)
		if g%8 == 7 {
			target = "/size/9000"
		}
		resp, err := wholeRoundTrip(c, []byte("GET "+target+" HTTP/1.1\r\nHost: x\r\n\r\n"))
		switch {
		case err != nil:
			return err
		case g%8 == 7 && !bytes.Equal(responseBody(t, resp), bodyPattern(9000)):
			return errors.New("rendezvous body differs")
		case g%8 != 7 && string(responseBody(t, resp)) != "GET "+target+" 0 e3b0c442":
			return fmt.Errorf("%q", responseBody(t, resp))
		}
		return nil
	})
	if got := ml.Stats().Inlined; got != want(164) {
		t.Errorf("after 64 concurrent callers: Inlined = %d, want %d", got, want(164))
	}
	t.Logf("late replies: %d", rdma.LateReplies(ml))
}

// TestTransportInlineNotInliner: a handler that is no server.Inliner is
// never run on the poller.
func TestTransportInlineNotInliner(t *testing.T) {
	needTransport(t)
	h := server.HandlerFunc(func(w *server.ResponseWriter, r *server.Request) { w.WriteString("plain") })
	ml, addr := startBackend(t, rdma.ListenConfig{Credits: 8, MessageSize: 4096}, h)
	c := dialClient(t, addr, rdma.DialOptions{Credits: 8, MessageSize: 4096})
	for i := range 20 {
		resp, err := wholeRoundTrip(c, []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
		if err != nil || string(responseBody(t, resp)) != "plain" {
			t.Fatalf("request %d: %v %q", i, err, resp)
		}
	}
	if got := ml.Stats().Inlined; got != 0 {
		t.Errorf("Inlined = %d for a handler that is no Inliner", got)
	}
}
