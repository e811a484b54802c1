package router

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/simdedge/simdedge/internal/testenv"
	"github.com/simdedge/simdedge/internal/testnet"
	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/internal/servetest"
	"github.com/simdedge/simdedge/server/pathnorm"
)

// Regression tests of issue 27, item 4, for the router on every engine
// (TestMain) and on a message transport: routes match, and handlers see,
// the normalised path.

// normTable denies /admin/ (403) and echoes everything else.
func normTable(t *testing.T) *Table {
	tab, err := New([]Route{
		{Match: Match{PathPrefix: "/admin/"}, Handler: Respond(403, "denied\n", nil)},
		{Match: Match{PathPrefix: "/"}, Handler: Echo()},
	})
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

var normCases = []struct{ target, status, echoed string }{
	{"/pub/../admin/x", "403", ""},
	{"//admin/x", "403", ""},
	{"/%61dmin/x", "403", ""},
	{"/pub/%2e%2e/admin/x", "403", ""},
	{"/pub/./a//b/%7E?x=/../y", "200", "/pub/a/b/~?x=/../y"},
	{"/pub/%zz", "400", ""},
}

// TestPathNormalizedRouter: over HTTP/1.1 and h2c on the test's engine.
func TestPathNormalizedRouter(t *testing.T) {
	testenv.CheckGoroutines(t)
	s := server.New(server.Options{Handler: NewSwitch(normTable(t))})
	addr := servetest.ServeH2C(t, s, testEngine)
	h2 := &http.Client{Timeout: 10 * time.Second, Transport: testnet.H2Transport(nil)}
	defer h2.CloseIdleConnections()
	for _, c := range normCases {
		// HTTP/1.1, raw bytes.
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		conn.SetDeadline(time.Now().Add(10 * time.Second))
		io.WriteString(conn, "GET "+c.target+" HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n")
		out, _ := io.ReadAll(conn)
		conn.Close()
		checkNorm(t, "h1", c.target, c.status, c.echoed, string(out))
		// h2c: Opaque keeps the :path as written.
		req, _ := http.NewRequest("GET", "http://"+addr+"/", nil)
		req.URL.Opaque = "//" + addr + c.target
		resp, err := h2.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		checkNorm(t, "h2c", c.target, c.status, c.echoed, "HTTP/2 "+resp.Status+"\r\n\r\n"+string(b))
	}
}

// TestPathNormalizedMessages: the same on a message transport.
func TestPathNormalizedMessages(t *testing.T) {
	l := serve(t, normTable(t))
	for _, c := range normCases {
		resp, body := exchange(t, l, "GET "+c.target+" HTTP/1.1\r\nHost: h\r\n\r\n")
		checkNorm(t, "message", c.target, c.status, c.echoed, "HTTP/1.1 "+resp.Status+"\r\n\r\n"+body)
	}
}

// checkNorm checks a response (status line, blank line, body) to target:
// its status, and the target Echo reported.
func checkNorm(t *testing.T, proto, target, status, echoed, out string) {
	t.Helper()
	f := strings.Fields(strings.SplitN(out, "\r\n", 2)[0])
	if len(f) < 2 || f[1] != status {
		t.Errorf("%s %s: got %.80q, want status %s", proto, target, out, status)
		return
	}
	if echoed == "" {
		return
	}
	_, body, _ := strings.Cut(out, "\r\n\r\n")
	var e struct{ Target string }
	if err := json.Unmarshal([]byte(body), &e); err != nil || e.Target != echoed {
		t.Errorf("%s %s: handler saw %q (%v), want %q", proto, target, e.Target, err, echoed)
	}
}

// TestZeroAllocNormalized: a warm request whose path needs normalising
// allocates nothing either (the normalised target goes into a buffer
// the connection keeps).
func TestZeroAllocNormalized(t *testing.T) {
	testenv.CheckGoroutines(t)
	s := server.New(server.Options{Handler: normTable(t)})
	addr := servetest.Serve(t, s, testEngine)
	c := testnet.Dial(t, addr, 10*time.Second)
	for _, req := range []string{
		"GET /pub/../admin/x HTTP/1.1\r\nHost: localhost\r\n\r\n",
		"GET //pub/./%61/b HTTP/1.1\r\nHost: localhost\r\n\r\n",
	} {
		rb := []byte(req)
		buf := make([]byte, 4096)
		c.Write(rb)
		size, _ := c.Read(buf)
		if !strings.HasPrefix(string(buf[:size]), "HTTP/1.1 ") {
			t.Fatalf("got %q", buf[:size])
		}
		allocs := testing.AllocsPerRun(100, func() {
			c.Write(rb)
			io.ReadFull(c, buf[:size])
		})
		if allocs != 0 {
			t.Errorf("%q: %v allocations per request", req[:20], allocs)
		}
	}
}

// TestListenerPaths: a listener's own keys (Server.SetListenerPaths)
// override the server's, on the test's engine; another listener keeps
// the server's.
func TestListenerPaths(t *testing.T) {
	testenv.CheckGoroutines(t)
	s := server.New(server.Options{Handler: normTable(t)})
	off := testnet.Listen(t)
	s.SetListenerPaths(off, &pathnorm.Options{Off: true})
	offAddr := servetest.ServeListener(t, s, off, testEngine)
	onAddr := servetest.Serve(t, s, testEngine)
	for _, c := range []struct {
		addr, status, echoed string
	}{{offAddr, "200", "/pub/../admin/x"}, {onAddr, "403", ""}} {
		conn, err := net.Dial("tcp", c.addr)
		if err != nil {
			t.Fatal(err)
		}
		conn.SetDeadline(time.Now().Add(10 * time.Second))
		io.WriteString(conn, "GET /pub/../admin/x HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n")
		out, _ := io.ReadAll(conn)
		conn.Close()
		checkNorm(t, "h1", "/pub/../admin/x", c.status, c.echoed, string(out))
	}
}
