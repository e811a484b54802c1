package proxy

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/simdedge/simdedge/internal/testenv"
	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/internal/servetest"
	"github.com/simdedge/simdedge/server/router"
)

// The four target forms of RFC 9112 §3.2, end to end through a router
// table with proxy routes, on every engine (issue 18, items 4 and 9), and
// transfer codings the edge does not decode (item 5).

// startRouted serves a router table: /echo answers with router.Echo (a
// non-proxy handler), requests for admin.internal go to the admin origin
// and everything else to the public one.
func startRouted(t *testing.T, public, admin string) string {
	t.Helper()
	newProxy := func(addr string) *Proxy {
		up, err := NewUpstream(UpstreamOptions{Targets: []string{addr}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(up.Close)
		return New(up, Options{})
	}
	tab, err := router.New([]router.Route{
		{Name: "echo", Match: router.Match{Path: "/echo"}, Handler: router.Echo()},
		{Name: "admin", Match: router.Match{Host: "admin.internal"}, Handler: newProxy(admin)},
		{Name: "public", Handler: newProxy(public)},
	})
	if err != nil {
		t.Fatal(err)
	}
	s := server.New(server.Options{Handler: router.NewSwitch(tab), LoopProxy: testLoopProxy})
	return servetest.Serve(t, s, testEngine)
}

// namedEcho is headerEcho that names the origin in X-Origin.
func namedEcho(name string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Origin", name)
		headerEcho(w, r)
	})
}

func TestTargetForms(t *testing.T) {
	testenv.CheckGoroutines(t)
	public, admin := startOrigin(t, namedEcho("public")), startOrigin(t, namedEcho("admin"))
	addr := startRouted(t, public.addr, admin.addr)
	for _, tc := range []struct {
		name, req string
		origin    *origin // nil: answered by the edge
		uri, host string
	}{
		// Origin form: routed by Host, forwarded unchanged.
		{"origin form", "GET /x?q=1 HTTP/1.1\r\nHost: public.example\r\n\r\n", public, "/x?q=1", "public.example"},
		{"origin form, admin host", "GET /x HTTP/1.1\r\nHost: admin.internal\r\n\r\n", admin, "/x", "admin.internal"},
		// Trailing dot, case and port: the same host.
		{"host with trailing dot", "GET /x HTTP/1.1\r\nHost: admin.internal.\r\n\r\n", admin, "/x", "admin.internal."},
		{"host case and port", "GET /x HTTP/1.1\r\nHost: ADMIN.Internal:8080\r\n\r\n", admin, "/x", "ADMIN.Internal:8080"},
		{"host dot and port", "GET /x HTTP/1.1\r\nHost: admin.internal.:8080\r\n\r\n", admin, "/x", "admin.internal.:8080"},
		// Absolute form: the authority wins, is routed on and is
		// forwarded as Host, with an origin-form target.
		{"absolute form over Host", "GET http://public.example/x?q HTTP/1.1\r\nHost: admin.internal\r\n\r\n", public, "/x?q", "public.example"},
		{"absolute form to admin", "GET http://admin.internal./y HTTP/1.1\r\nHost: public.example\r\n\r\n", admin, "/y", "admin.internal."},
		{"absolute form with port", "GET HTTP://Public.Example:8080/z HTTP/1.1\r\nHost: admin.internal\r\n\r\n", public, "/z", "Public.Example:8080"},
		{"absolute form, empty path", "GET http://public.example HTTP/1.1\r\nHost: admin.internal\r\n\r\n", public, "/", "public.example"},
		{"absolute form, query only", "GET https://public.example?a=b HTTP/1.1\r\nHost: admin.internal\r\n\r\n", public, "/?a=b", "public.example"},
		{"absolute OPTIONS", "OPTIONS http://public.example/o HTTP/1.1\r\nHost: admin.internal\r\n\r\n", public, "/o", "public.example"},
		// Asterisk and authority forms: answered by the edge.
		{"asterisk form", "OPTIONS * HTTP/1.1\r\nHost: public.example\r\n\r\n", nil, "200", ""},
		{"asterisk form, admin host", "OPTIONS * HTTP/1.1\r\nHost: admin.internal\r\n\r\n", nil, "200", ""},
		{"authority form", "CONNECT admin.internal:443 HTTP/1.1\r\nHost: admin.internal:443\r\n\r\n", nil, "501", ""},
	} {
		pub0, adm0 := public.conns.Load(), admin.conns.Load()
		resp, body := rawExchange(t, addr, tc.req)
		if tc.origin == nil {
			if got := resp.Status[:3]; got != tc.uri {
				t.Errorf("%s: status %s, want %s", tc.name, resp.Status, tc.uri)
			}
			if public.conns.Load() != pub0 || admin.conns.Load() != adm0 {
				t.Errorf("%s: forwarded to an origin", tc.name)
			}
			switch tc.uri {
			case "200":
				if resp.Header.Get("Allow") != server.AllowedMethods || resp.ContentLength != 0 || body != "" {
					t.Errorf("%s: Allow %q, length %d, body %q", tc.name, resp.Header.Get("Allow"), resp.ContentLength, body)
				}
			case "501":
				if !resp.Close {
					t.Errorf("%s: connection left open after a refused CONNECT", tc.name)
				}
			}
			continue
		}
		var e echoed
		if resp.StatusCode != 200 || json.Unmarshal([]byte(body), &e) != nil {
			t.Errorf("%s: %d %q", tc.name, resp.StatusCode, body)
			continue
		}
		if e.URI != tc.uri || e.Host != tc.host {
			t.Errorf("%s: origin saw %q with Host %q, want %q with Host %q", tc.name, e.URI, e.Host, tc.uri, tc.host)
		}
		if n := len(e.Header["Host"]); n != 0 {
			t.Errorf("%s: %d extra Host fields", tc.name, n)
		}
		want := "public"
		if tc.origin == admin {
			want = "admin"
		}
		if got := resp.Header.Get("X-Origin"); got != want {
			t.Errorf("%s: routed to %q, want %q", tc.name, got, want)
		}
	}
}

// TestAbsoluteOptionsAsterisk: an OPTIONS with an absolute-form target
// whose path is empty is forwarded as "OPTIONS *" (RFC 9112 §3.2.4), with
// Host from the target. (net/http answers "OPTIONS *" itself, so a raw
// origin records what arrives.)
func TestAbsoluteOptionsAsterisk(t *testing.T) {
	testenv.CheckGoroutines(t)
	got := make(chan string, 1)
	oaddr := rawOrigin(t, func(c net.Conn, i int, req *http.Request) bool {
		select {
		case got <- req.Method + " " + req.RequestURI + " " + req.Host:
		default:
		}
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
		return true
	})
	addr, _ := startProxy(t, UpstreamOptions{Targets: []string{oaddr}}, server.Options{})
	if resp, _ := rawExchange(t, addr, "OPTIONS http://public.example:81 HTTP/1.1\r\nHost: admin.internal\r\n\r\n"); resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if s := <-got; s != "OPTIONS * public.example:81" {
		t.Errorf("origin saw %q, want %q", s, "OPTIONS * public.example:81")
	}
}

// TestSpecialTargetsProxyOnly: a proxy serving alone (no router) answers
// the asterisk and authority forms itself as well.
func TestSpecialTargetsProxyOnly(t *testing.T) {
	testenv.CheckGoroutines(t)
	o := startOrigin(t, headerEcho)
	addr, _ := startProxy(t, UpstreamOptions{Targets: []string{o.addr}}, server.Options{})
	if resp, _ := rawExchange(t, addr, "OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n"); resp.StatusCode != 200 || resp.Header.Get("Allow") == "" {
		t.Errorf("OPTIONS *: %d Allow %q", resp.StatusCode, resp.Header.Get("Allow"))
	}
	if resp, _ := rawExchange(t, addr, "CONNECT x:443 HTTP/1.1\r\nHost: x:443\r\n\r\n"); resp.StatusCode != 501 {
		t.Errorf("CONNECT: %d", resp.StatusCode)
	}
	if resp, _ := rawExchange(t, addr, "GET urn:isbn:0 HTTP/1.1\r\nHost: x\r\n\r\n"); resp.StatusCode != 400 {
		t.Errorf("absolute form without authority: %d, want 400", resp.StatusCode)
	}
	if n := o.conns.Load(); n != 0 {
		t.Errorf("origin saw %d connections", n)
	}
}

// TestTransferCodingNotDropped: a body with a transfer coding besides
// chunked is refused with 501 on a proxy route and on a handler route
// alike; it never reaches an origin or a handler de-chunked but still
// coded (issue 18, item 5).
func TestTransferCodingNotDropped(t *testing.T) {
	testenv.CheckGoroutines(t)
	public, admin := startOrigin(t, headerEcho), startOrigin(t, headerEcho)
	addr := startRouted(t, public.addr, admin.addr)
	const gz = "19\r\n\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03\xcb\x48\xcd\xc9\xc9\x07\x00\x86\xa6\x10\x36\x05\x00\x00\x00\r\n0\r\n\r\n"
	for _, te := range []string{"gzip, chunked", "deflate, chunked", "gzip,chunked", "x-gzip, chunked"} {
		for _, path := range []string{"/up", "/echo"} {
			resp, _ := rawExchange(t, addr, "POST "+path+" HTTP/1.1\r\nHost: public.example\r\nTransfer-Encoding: "+te+"\r\n\r\n"+gz)
			if resp.StatusCode != 501 {
				t.Errorf("%s %q: %d, want 501", path, te, resp.StatusCode)
			}
		}
	}
	// Two fields form one list: the same.
	resp, _ := rawExchange(t, addr, "POST /up HTTP/1.1\r\nHost: public.example\r\nTransfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n"+gz)
	if resp.StatusCode != 501 {
		t.Errorf("split fields: %d, want 501", resp.StatusCode)
	}
	if n := public.conns.Load(); n != 0 {
		t.Errorf("origin saw %d connections", n)
	}
	// Plain chunked still passes.
	resp, body := rawExchange(t, addr, "POST /up HTTP/1.1\r\nHost: public.example\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n")
	if resp.StatusCode != 200 || !strings.Contains(body, `"body":"hello"`) {
		t.Errorf("chunked: %d %q", resp.StatusCode, body)
	}
}
