package router

import (
	"context"
	"io"
	"net/http"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/simdedge/simdedge/internal/testnet"
	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/access"
	"github.com/simdedge/simdedge/server/proxy"
	"github.com/simdedge/simdedge/server/rewrite"
	"github.com/simdedge/simdedge/server/servertest"
)

// TestOneLookupPerRequest: the server looks a request's route up once
// (issue 28), whatever serves it: an inline answer, a gate's refusal, a
// rewrite, a Go handler (the loop hands the connection to a goroutine),
// a proxy (on goroutines, or by the loop itself with LoopProxy), the 404;
// over HTTP/1.1, h2c and a message transport, on the engine under test.
// Before, the loop looked a proxied request up twice (its Inliner, then
// its LoopProxier), and a handed-off request a third time on its
// goroutine.
func TestOneLookupPerRequest(t *testing.T) {
	var lookups atomic.Int64
	lookupHook = func() { lookups.Add(1) }
	t.Cleanup(func() { lookupHook = nil }) // runs last: after every server stopped

	origin := testnet.Listen(t)
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Write([]byte("origin"))
	})}
	go hs.Serve(origin)
	t.Cleanup(func() { hs.Close() })
	up, err := proxy.NewUpstream(proxy.UpstreamOptions{Targets: []string{origin.Addr().String()}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(up.Close)
	rw, err := rewrite.ReplacePrefix("/rw", "/rewritten")
	if err != nil {
		t.Fatal(err)
	}
	deny := access.Rules{Deny: access.NewPrefixes([]netip.Prefix{netip.MustParsePrefix("0.0.0.0/0"), netip.MustParsePrefix("::/0")})}
	tab, err := New([]Route{
		{Match: Match{Path: "/inline"}, Handler: HSTS(Respond(200, "inline", nil), HSTSPolicy{MaxAge: 60})},
		{Match: Match{Path: "/deny"}, Handler: Gate(Respond(200, "no", nil), GatePolicy{Rules: deny})},
		{Match: Match{Path: "/rw"}, Handler: Echo(), Policy: &Policy{Path: rw}},
		{Match: Match{Path: "/go"}, Handler: server.HandlerFunc(func(w *server.ResponseWriter, r *server.Request) { w.WriteString("go") })},
		{Match: Match{PathPrefix: "/proxy"}, Handler: HSTS(proxy.New(up, proxy.Options{}), HSTSPolicy{MaxAge: 60})},
	})
	if err != nil {
		t.Fatal(err)
	}
	paths := []struct {
		path, method string
		status       int
	}{
		{"/inline", "GET", 200}, {"/deny", "GET", 403}, {"/rw", "GET", 200}, {"/go", "GET", 200},
		{"/proxy", "GET", 200}, {"/proxy", "POST", 200}, {"/none", "GET", 404},
	}
	for _, loopProxy := range []bool{false, true} {
		s := server.New(server.Options{Handler: NewSwitch(tab), LoopProxy: loopProxy})
		ln := testnet.Listen(t)
		s.EnableH2C(ln)
		ml := servertest.NewMessageListener(1 << 16)
		done := make(chan error, 2)
		go func() { done <- s.ServeTCP(ln, testEngine) }()
		go func() { done <- s.ServeMessages(ml) }()
		for _, tr := range []struct {
			name string
			rt   *http.Transport
		}{{"http/1.1", &http.Transport{}}, {"h2c", testnet.H2Transport(nil)}} {
			c := &http.Client{Transport: tr.rt, Timeout: 10 * time.Second}
			for _, p := range paths {
				tr.rt.CloseIdleConnections()
				for i := range 2 { // a new connection, then a kept one
					before := lookups.Load()
					var body io.Reader
					if p.method == "POST" {
						body = strings.NewReader("body")
					}
					req, _ := http.NewRequest(p.method, "http://"+ln.Addr().String()+p.path, body)
					resp, err := c.Do(req)
					if err != nil {
						t.Fatalf("%s %s %s: %v", tr.name, p.method, p.path, err)
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if n := lookups.Load() - before; resp.StatusCode != p.status || n != 1 {
						t.Errorf("loop proxy %v, %s %s %s (%d): status %d and %d lookups, want %d and 1",
							loopProxy, tr.name, p.method, p.path, i, resp.StatusCode, n, p.status)
					}
				}
			}
			tr.rt.CloseIdleConnections()
		}
		for _, p := range paths {
			before := lookups.Load()
			req := p.method + " " + p.path + " HTTP/1.1\r\nHost: edge\r\nContent-Length: 0\r\n\r\n"
			out, err := ml.Exchange([]byte(req))
			if err != nil || len(out) == 0 {
				t.Fatalf("message %s %s: %v", p.method, p.path, err)
			}
			want := p.status
			if p.path == "/deny" {
				want = 200 // the memory transport's client has no IP address
			}
			if n := lookups.Load() - before; n != 1 || !strings.Contains(string(out[0]), " "+itoa(want)+" ") {
				t.Errorf("message %s %s: %d lookups, reply %.40q, want 1 and %d", p.method, p.path, n, out[0], want)
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		s.Shutdown(ctx)
		cancel()
		<-done
		<-done
	}
}

func itoa(n int) string {
	return string([]byte{byte('0' + n/100), byte('0' + n/10%10), byte('0' + n%10)})
}
