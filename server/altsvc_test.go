package server

import (
	"bufio"
	"context"
	"io"
	"net"
	"testing"
	"time"

	"github.com/simdedge/simdedge/internal/testenv"
	"github.com/simdedge/simdedge/internal/testnet"
)

// TestAltSvcAfterPark: a keep-alive connection keeps its listener's
// Alt-Svc through a park (its conn given back while it idles, then another
// taken, maybe one another listener's connection used meanwhile), and a
// listener without one sends none.
func TestAltSvcAfterPark(t *testing.T) {
	testenv.CheckGoroutines(t)
	s := New(Options{Handler: okHandler("ok")})
	a, b := testnet.Listen(t), testnet.Listen(t)
	const want = `h3=":8443"; ma=60`
	s.SetListenerAltSvc(a, want)
	done := make(chan error, 2)
	for _, l := range []net.Listener{a, b} {
		go func() { done <- s.ServeTCP(l, testEngine) }()
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		s.Shutdown(ctx)
		<-done
		<-done
	})
	get := func(c net.Conn, br *bufio.Reader) string {
		t.Helper()
		io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		resp, _ := readResponse(t, br, "GET")
		return resp.Header.Get("Alt-Svc")
	}
	ca := dial(t, a.Addr().String())
	bra := bufio.NewReader(ca)
	if got := get(ca, bra); got != want {
		t.Fatalf("first answer: Alt-Svc %q", got)
	}
	idle := parkAfter + 300*time.Millisecond // the connection parks
	time.Sleep(idle)
	cb := dial(t, b.Addr().String())
	brb := bufio.NewReader(cb)
	if got := get(cb, brb); got != "" {
		t.Fatalf("a listener without Alt-Svc sent %q", got)
	}
	time.Sleep(idle)
	if got := get(ca, bra); got != want {
		t.Fatalf("after a park: Alt-Svc %q, want %q", got, want)
	}
	if got := get(cb, brb); got != "" {
		t.Fatalf("after a park, a listener without Alt-Svc sent %q", got)
	}
}
