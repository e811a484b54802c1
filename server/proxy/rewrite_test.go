package proxy

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/simdedge/simdedge/internal/testenv"
	"github.com/simdedge/simdedge/internal/testnet"
	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/internal/servetest"
	"github.com/simdedge/simdedge/server/rewrite"
	"github.com/simdedge/simdedge/server/router"
)

// rewriteOrigin answers with the request it received (as headerEcho) and
// a Server field of its own.
var rewriteOrigin = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Server", "origin/1.0")
	w.Header().Set("X-Origin", "yes")
	headerEcho(w, r)
})

func fields(t *testing.T, side rewrite.Side, set, add [][2]string, remove ...string) rewrite.HeaderOps {
	t.Helper()
	conv := func(in [][2]string) (out []rewrite.Field) {
		for _, f := range in {
			out = append(out, rewrite.Field{Name: f[0], Value: rewrite.MustTemplate(f[1])})
		}
		return out
	}
	ops, err := rewrite.NewHeaderOps(side, conv(set), conv(add), remove)
	if err != nil {
		t.Fatal(err)
	}
	return ops
}

// startRewriteProxy serves a table whose /api/ route rewrites towards
// the origin at target (issue 23's example) on the test's engine and
// proxy path.
func startRewriteProxy(t *testing.T, target string) string {
	t.Helper()
	up := newUpstream(t, UpstreamOptions{Targets: []string{target}})
	strip, _ := rewrite.StripPrefix("/api")
	tab, err := router.New([]router.Route{{
		Match: router.Match{PathRegex: regexp.MustCompile(`^/api/(v[0-9]+)/`), Headers: []router.HeaderMatch{{Name: "X-Tenant", Value: "blue"}}},
		Policy: &router.Policy{
			Path:     strip,
			Request:  fields(t, rewrite.RequestSide, [][2]string{{"X-Client", "{client_ip}"}}, [][2]string{{"X-Version", "{1}"}}, "X-Debug"),
			Response: fields(t, rewrite.ResponseSide, [][2]string{{"X-Served-By", "edge"}}, [][2]string{{"X-Version", "{1}"}}, "Server"),
		},
		Handler: New(up, Options{}),
	}})
	if err != nil {
		t.Fatal(err)
	}
	s := server.New(server.Options{Handler: router.NewSwitch(tab), LoopProxy: testLoopProxy})
	return servetest.Serve(t, s, testEngine)
}

// TestRewriteProxy: issue 23's route on every engine and both proxy
// paths, with Go's client: the upstream gets the stripped path with its
// query, the edited request fields (the client's X-Client replaced, the
// capture added, X-Debug gone), and the client gets the upstream's
// answer without its Server field and with the route's fields; a fresh
// and a pooled upstream connection, and a request that does not match.
func TestRewriteProxy(t *testing.T) {
	testenv.CheckGoroutines(t)
	o := startOrigin(t, rewriteOrigin)
	addr := startRewriteProxy(t, o.addr)
	c := client(t)
	for i := range 3 {
		req, _ := http.NewRequest("GET", "http://"+addr+"/api/v3/items?id=7&x=%2F", nil)
		req.Header.Set("X-Tenant", "blue")
		req.Header.Set("X-Debug", "1")
		req.Header.Set("X-Client", "203.0.113.9")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var e echoed
		err = json.NewDecoder(resp.Body).Decode(&e)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if e.URI != "/v3/items?id=7&x=%2F" || e.Header.Get("X-Debug") != "" || strings.Join(e.Header.Values("X-Client"), ",") != "127.0.0.1" ||
			e.Header.Get("X-Version") != "v3" || e.Header.Get("X-Tenant") != "blue" {
			t.Errorf("%d: upstream saw %+v", i, e)
		}
		if resp.StatusCode != 200 || resp.Header.Get("Server") != "" || resp.Header.Get("X-Origin") != "yes" ||
			resp.Header.Get("X-Served-By") != "edge" || resp.Header.Get("X-Version") != "v3" || resp.Header.Get("Via") == "" {
			t.Errorf("%d: client got %d %v", i, resp.StatusCode, resp.Header)
		}
	}
	resp, err := c.Get("http://" + addr + "/api/v3/items") // no X-Tenant: no route
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Errorf("unmatched: %d", resp.StatusCode)
	}
}

// TestRewriteProxyCurl: the same route with curl, and the response edit
// on the proxy's own answer when the upstream refuses (503: every target
// refused).
func TestRewriteProxyCurl(t *testing.T) {
	curl := testenv.Command(t, "curl")
	testenv.CheckGoroutines(t)
	o := startOrigin(t, rewriteOrigin)
	addr := startRewriteProxy(t, o.addr)
	run := func(url string) string {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		out, err := exec.CommandContext(ctx, curl, "-sS", "--max-time", "10", "-i", "-H", "X-Tenant: blue", "-H", "X-Debug: on", url).CombinedOutput()
		if err != nil {
			t.Fatalf("curl: %v %s", err, out)
		}
		return string(out)
	}
	out := run("http://" + addr + "/api/v1/a/b?q=1")
	low := strings.ToLower(out)
	if !strings.Contains(out, `"uri":"/v1/a/b?q=1"`) || strings.Contains(low, "server:") || strings.Contains(low, "x-debug") ||
		!strings.Contains(out, "X-Served-By: edge") {
		t.Errorf("curl: %s", out)
	}
	dead := testnet.RefusingAddr(t) // connections to it are refused
	addr = startRewriteProxy(t, dead)
	out = run("http://" + addr + "/api/v1/x")
	if !strings.HasPrefix(out, "HTTP/1.1 50") || !strings.Contains(out, "X-Served-By: edge") || !strings.Contains(out, "X-Version: v1") {
		t.Errorf("refused: %s", out)
	}
}

// TestRewriteProxyZeroAlloc: a warm proxied request through a route with
// a strip_prefix and request and response header edits (no captures)
// allocates nothing, on either proxy path.
func TestRewriteProxyZeroAlloc(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	origin := server.New(server.Options{Handler: server.HandlerFunc(func(w *server.ResponseWriter, r *server.Request) {
		w.AddHeader("Server", "origin")
		w.WriteString(string(r.Target()[:4]))
	})})
	olAddr := servetest.Serve(t, origin, testEngine)
	up := newUpstream(t, UpstreamOptions{Targets: []string{olAddr}})
	strip, _ := rewrite.StripPrefix("/api")
	tab, err := router.New([]router.Route{{
		Match: router.Match{PathPrefix: "/api/"},
		Policy: &router.Policy{Path: strip,
			Request:  fields(t, rewrite.RequestSide, [][2]string{{"X-Client", "{client_ip}"}}, nil, "X-Debug"),
			Response: fields(t, rewrite.ResponseSide, [][2]string{{"X-Served-By", "edge"}}, nil, "Server")},
		Handler: New(up, Options{}),
	}})
	if err != nil {
		t.Fatal(err)
	}
	s := server.New(server.Options{Handler: tab, LoopProxy: testLoopProxy})
	c, err := net.DialTimeout("tcp", servetest.Serve(t, s, testEngine), testTimeout)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	req := []byte("GET /api/abc HTTP/1.1\r\nHost: localhost\r\nX-Debug: 1\r\n\r\n")
	buf := make([]byte, 4096)
	var size int
	for range 5 {
		size = len(testnet.Exchange(t, c, req, buf))
	}
	if got := string(buf[:size]); !strings.HasSuffix(got, "/abc") || strings.Contains(got, "Server:") || !strings.Contains(got, "X-Served-By: edge") {
		t.Fatalf("got %q", got)
	}
	allocs := testing.AllocsPerRun(200, func() {
		if _, err := c.Write(req); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(c, buf[:size]); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per rewritten proxied request, want 0", allocs)
	}
}
