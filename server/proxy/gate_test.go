package proxy

import (
	"io"
	"net"
	"net/http"
	"net/netip"
	"os/exec"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/simdedge/simdedge/internal/testenv"
	"github.com/simdedge/simdedge/internal/testnet"
	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/access"
	"github.com/simdedge/simdedge/server/internal/servetest"
	"github.com/simdedge/simdedge/server/ratelimit"
	"github.com/simdedge/simdedge/server/router"
)

// secretHash is bcrypt("secret"), cost 10.
const secretHash = "$2a$10$utS24a/0RWW..DRCeWjd9OUkW8WhLsC7MFl04n9UKUmqqCq4ZE8lC"

func prefixes(t *testing.T, list ...string) *access.Prefixes {
	t.Helper()
	p, _, err := access.ParsePrefixes(list)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// clientFrom is an HTTP client whose connections leave from src (another
// 127.x address simulates another client).
func clientFrom(t *testing.T, src string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: testTimeout}
	tr := &http.Transport{DialContext: d.DialContext}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: testTimeout, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}
}

type gateAnswer struct {
	status int
	body   string
	header http.Header
}

func gateDo(t *testing.T, c *http.Client, url string, set func(*http.Request)) gateAnswer {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if set != nil {
		set(req)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return gateAnswer{resp.StatusCode, string(b), resp.Header}
}

// TestGate: allow/deny (403, deny wins), rate limits (429 with
// Retry-After), Basic auth (401 with the challenge, then cached) and
// forward auth (the service's refusal relayed, copy_headers replacing the
// client's) on inline and proxy routes, on every engine and both proxy
// paths, with the client address taken behind trusted proxies.
func TestGate(t *testing.T) {
	testenv.CheckGoroutines(t)
	o := startOrigin(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "origin "+r.URL.Path+" user="+r.Header.Get("X-User"))
	}))
	var authCalls atomic.Int32
	auth := startOrigin(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		authCalls.Add(1)
		if r.Method != "GET" || r.Header.Get("X-Forwarded-Uri") == "" || r.Header.Get("X-Forwarded-Method") != "GET" {
			w.WriteHeader(400)
			return
		}
		if r.Header.Get("Authorization") == "Bearer good" {
			w.Header().Set("X-User", "alice")
			w.WriteHeader(204)
			return
		}
		w.Header().Set("WWW-Authenticate", `Bearer realm="auth"`)
		w.WriteHeader(401)
		io.WriteString(w, "denied by auth for "+r.Header.Get("X-Forwarded-For"))
	}))
	up := newUpstream(t, UpstreamOptions{Targets: []string{o.addr}})
	px := New(up, Options{})
	inline := router.Respond(200, "inline\n", nil)
	lim := func() *ratelimit.Limiter {
		l, err := ratelimit.New(ratelimit.Options{Rate: 0.01, Burst: 3})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	basic, err := access.NewBasic("edge", map[string]string{"alice": secretHash})
	if err != nil {
		t.Fatal(err)
	}
	fa, err := router.NewForwardAuth(router.ForwardAuthOptions{URL: "http://" + auth.addr + "/auth", CopyHeaders: []string{"X-User"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fa.Close)
	rules := access.Rules{Allow: prefixes(t, "127.0.0.2/31"), Deny: prefixes(t, "127.0.0.3")}
	routes := []router.Route{
		{Match: router.Match{PathPrefix: "/acl/inline"}, Handler: router.Gate(inline, router.GatePolicy{Rules: rules})},
		{Match: router.Match{PathPrefix: "/acl/proxy"}, Handler: router.Gate(px, router.GatePolicy{Rules: rules})},
		{Match: router.Match{PathPrefix: "/rl/inline"}, Handler: router.Gate(inline, router.GatePolicy{Limit: lim()})},
		{Match: router.Match{PathPrefix: "/rl/proxy"}, Handler: router.Gate(px, router.GatePolicy{Limit: lim()})},
		{Match: router.Match{PathPrefix: "/rl/header"}, Handler: router.Gate(px, router.GatePolicy{Limit: lim(), LimitHeader: "X-Api-Key"})},
		{Match: router.Match{PathPrefix: "/basic/inline"}, Handler: router.Gate(inline, router.GatePolicy{Basic: basic})},
		{Match: router.Match{PathPrefix: "/basic/proxy"}, Handler: router.Gate(px, router.GatePolicy{Basic: basic})},
		{Match: router.Match{PathPrefix: "/fa/"}, Handler: router.Gate(px, router.GatePolicy{Forward: fa})},
	}
	tab, err := router.New(routes)
	if err != nil {
		t.Fatal(err)
	}
	s := server.New(server.Options{Handler: router.NewSwitch(tab), LoopProxy: testLoopProxy,
		TrustedProxies: access.NewPrefixes([]netip.Prefix{netip.MustParsePrefix("127.0.0.4/32")})})
	addr := servetest.Serve(t, s, testEngine)
	base := "http://" + addr
	c1, c2, c3, c4 := clientFrom(t, "127.0.0.1"), clientFrom(t, "127.0.0.2"), clientFrom(t, "127.0.0.3"), clientFrom(t, "127.0.0.4")
	xff := func(v string) func(*http.Request) {
		return func(r *http.Request) { r.Header.Set("X-Forwarded-For", v) }
	}

	t.Run("allow-deny", func(t *testing.T) {
		for _, p := range []string{"/acl/inline", "/acl/proxy"} {
			for _, tc := range []struct {
				c    *http.Client
				set  func(*http.Request)
				want int
			}{
				{c1, nil, 403},              // not in allow
				{c2, nil, 200},              // allowed
				{c3, nil, 403},              // in allow and deny: deny wins
				{c1, xff("127.0.0.2"), 403}, // untrusted peer: its X-Forwarded-For is ignored
				{c4, xff("127.0.0.2"), 200}, // trusted peer: the client behind it
				{c4, xff("127.0.0.2, 127.0.0.3"), 403},
				{c4, nil, 403},
			} {
				if a := gateDo(t, tc.c, base+p, tc.set); a.status != tc.want {
					t.Errorf("%s: status %d, want %d (%q)", p, a.status, tc.want, a.body)
				}
			}
		}
	})
	t.Run("rate-limit", func(t *testing.T) {
		for _, p := range []string{"/rl/inline", "/rl/proxy"} {
			for i := range 3 {
				if a := gateDo(t, c1, base+p, nil); a.status != 200 {
					t.Fatalf("%s: request %d of the burst: %d", p, i, a.status)
				}
			}
			a := gateDo(t, c1, base+p, nil)
			ra, _ := strconv.Atoi(a.header.Get("Retry-After"))
			if a.status != 429 || ra < 1 || ra > 100 {
				t.Errorf("%s: over the burst: %d, Retry-After %q", p, a.status, a.header.Get("Retry-After"))
			}
			// Another client has its own bucket.
			if a := gateDo(t, c2, base+p, nil); a.status != 200 {
				t.Errorf("%s: another client: %d", p, a.status)
			}
		}
		key := func(k string) func(*http.Request) { return func(r *http.Request) { r.Header.Set("X-Api-Key", k) } }
		for range 3 {
			gateDo(t, c1, base+"/rl/header", key("a"))
		}
		if a := gateDo(t, c2, base+"/rl/header", key("a")); a.status != 429 {
			t.Errorf("header key: same key from another address: %d, want 429", a.status)
		}
		if a := gateDo(t, c1, base+"/rl/header", key("b")); a.status != 200 {
			t.Errorf("header key: another key: %d", a.status)
		}
	})
	// Admitted and refused requests of allow/deny and rate-limited
	// proxy routes stay on the loop: nothing was handed to goroutines.
	if testLoopProxy {
		if n := pooledOnGoroutines(up); n != 0 {
			t.Errorf("%d upstream connections in the goroutine pool: gated requests were handed off", n)
		}
	}
	t.Run("basic", func(t *testing.T) {
		for _, p := range []string{"/basic/inline", "/basic/proxy"} {
			a := gateDo(t, c1, base+p, nil)
			if a.status != 401 || a.header.Get("WWW-Authenticate") != `Basic realm="edge", charset="UTF-8"` {
				t.Errorf("%s: no credentials: %d %q", p, a.status, a.header.Get("WWW-Authenticate"))
			}
			if a := gateDo(t, c1, base+p, func(r *http.Request) { r.SetBasicAuth("alice", "wrong") }); a.status != 401 {
				t.Errorf("%s: wrong password: %d", p, a.status)
			}
			for i := range 2 { // verified, then cached
				if a := gateDo(t, c1, base+p, func(r *http.Request) { r.SetBasicAuth("alice", "secret") }); a.status != 200 {
					t.Errorf("%s (%d): right password: %d %q", p, i, a.status, a.body)
				}
			}
		}
		curl, err := exec.LookPath("curl")
		if err != nil {
			t.Skip("curl not installed")
		}
		out, err := exec.Command(curl, "-s", "-u", "alice:secret", "-w", " %{http_code}", base+"/basic/proxy/x").CombinedOutput()
		if err != nil || string(out) != "origin /basic/proxy/x user= 200" {
			t.Errorf("curl -u: %q %v", out, err)
		}
	})
	t.Run("forward-auth", func(t *testing.T) {
		a := gateDo(t, c1, base+"/fa/x", func(r *http.Request) { r.Header.Set("X-User", "mallory") })
		if a.status != 401 || a.header.Get("WWW-Authenticate") != `Bearer realm="auth"` || a.body != "denied by auth for 127.0.0.1" {
			t.Errorf("refused: %d %q %v", a.status, a.body, a.header)
		}
		a = gateDo(t, c1, base+"/fa/x", func(r *http.Request) {
			r.Header.Set("Authorization", "Bearer good")
			r.Header.Set("X-User", "mallory")
		})
		if a.status != 200 || a.body != "origin /fa/x user=alice" {
			t.Errorf("allowed: %d %q", a.status, a.body)
		}
		if authCalls.Load() != 2 {
			t.Errorf("%d calls to the auth service, want 2", authCalls.Load())
		}
	})
}

// TestForwardAuthFailures: an auth service that refuses connections gives
// 502, one that does not answer within the timeout 504, and neither lets
// the request through.
func TestForwardAuthFailures(t *testing.T) {
	testenv.CheckGoroutines(t)
	deadAddr := testnet.RefusingAddr(t) // connections to it are refused
	release := make(chan struct{})
	slow := startOrigin(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() { close(release) })
	var reached atomic.Int32
	inner := server.HandlerFunc(func(w *server.ResponseWriter, r *server.Request) {
		reached.Add(1)
		w.WriteString("through")
	})
	var routes []router.Route
	for _, tc := range []struct{ path, url string }{{"/dead", deadAddr}, {"/slow", slow.addr}} {
		fa, err := router.NewForwardAuth(router.ForwardAuthOptions{URL: "http://" + tc.url + "/auth", Timeout: 300 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(fa.Close)
		routes = append(routes, router.Route{Match: router.Match{PathPrefix: tc.path}, Handler: router.Gate(inner, router.GatePolicy{Forward: fa})})
	}
	tab, err := router.New(routes)
	if err != nil {
		t.Fatal(err)
	}
	s := server.New(server.Options{Handler: router.NewSwitch(tab), LoopProxy: testLoopProxy})
	addr := servetest.Serve(t, s, testEngine)
	c := clientFrom(t, "127.0.0.1")
	for path, want := range map[string]int{"/dead": 502, "/slow": 504} {
		if a := gateDo(t, c, "http://"+addr+path, nil); a.status != want {
			t.Errorf("%s: %d %q, want %d", path, a.status, a.body, want)
		}
	}
	if reached.Load() != 0 {
		t.Errorf("the handler ran %d times", reached.Load())
	}
}
