package proxy

import (
	"crypto/tls"
	"io"
	"net/http"
	"net/url"
	"path"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/simdedge/simdedge/internal/testcert"
	"github.com/simdedge/simdedge/internal/testenv"
	"github.com/simdedge/simdedge/internal/testnet"
	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/internal/servetest"
	"github.com/simdedge/simdedge/server/pathnorm"
	"github.com/simdedge/simdedge/server/rewrite"
	"github.com/simdedge/simdedge/server/router"
)

// Regression tests of issue 27, item 4: with "/admin/" denied, no
// spelling of an admin path reaches the backend, on every engine and both
// proxy paths (TestMain), over HTTP/1.1, h2c and h2 over TLS.

// recorder is an origin that records each request target as it arrived
// on the wire (RequestURI is not cleaned by net/http's server).
type recorder struct {
	mu   sync.Mutex
	uris []string
	addr string
}

func startRecorder(t *testing.T) *recorder {
	rec := &recorder{}
	o := startOrigin(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.mu.Lock()
		rec.uris = append(rec.uris, r.RequestURI)
		rec.mu.Unlock()
		io.WriteString(w, "origin")
	}))
	rec.addr = o.addr
	return rec
}

// take returns the targets recorded since the last call.
func (rec *recorder) take() []string {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	u := rec.uris
	rec.uris = nil
	return u
}

// reachesAdmin reports whether a backend that decodes and cleans paths
// (nginx) would serve target from /admin/.
func reachesAdmin(target string) bool {
	p, _, _ := strings.Cut(target, "?")
	if d, err := url.PathUnescape(p); err == nil {
		p = d
	}
	return strings.HasPrefix(path.Clean(p)+"/", "/admin/")
}

// normEdge is a proxy under test: an h2c-enabled plain listener and a
// TLS listener offering h2, and a client for the latter.
type normEdge struct {
	plain, tls string
	h2         *http.Client
}

// startNormProxy serves, on an h2c-enabled listener and a TLS one, routes that deny
// /admin/ (403), rewrite /files/(.*) to /static/{1} (the capture escape of
// the issue), forward /raw/ as sent (PathAsSent), and proxy everything
// else to target; paths is the server's normalisation.
func startNormProxy(t *testing.T, target string, paths pathnorm.Options) *normEdge {
	t.Helper()
	up := newUpstream(t, UpstreamOptions{Targets: []string{target}})
	re := regexp.MustCompile(`^/files/(.*)$`)
	toStatic, err := rewrite.RegexReplace(re, "/static/{1}")
	if err != nil {
		t.Fatal(err)
	}
	h := New(up, Options{})
	tab, err := router.New([]router.Route{
		{Match: router.Match{PathPrefix: "/admin/"}, Handler: router.Respond(403, "denied\n", nil)},
		{Match: router.Match{PathRegex: re}, Policy: &router.Policy{Path: toStatic}, Handler: h},
		{Match: router.Match{PathPrefix: "/raw/"}, PathAsSent: true, Handler: h},
		{Match: router.Match{PathPrefix: "/"}, Handler: h},
	})
	if err != nil {
		t.Fatal(err)
	}
	s := server.New(server.Options{Handler: router.NewSwitch(tab), LoopProxy: testLoopProxy, Paths: paths})
	ca := testcert.NewCA(t, "edge CA")
	leaf := ca.Leaf(t, "edge", []string{"edge.example"}, time.Time{}, time.Time{})
	e := &normEdge{plain: servetest.ServeH2C(t, s, testEngine), tls: servetest.ServeTLS(t, s, testEngine, server.TLSOptions{Config: &tls.Config{Certificates: []tls.Certificate{leaf.TLS}, NextProtos: []string{"h2", "http/1.1"}}}),
		h2: &http.Client{Timeout: testTimeout, Transport: testnet.H2Transport(&tls.Config{ServerName: "edge.example", RootCAs: ca.Pool})}}
	t.Cleanup(e.h2.CloseIdleConnections)
	return e
}

// normProtos are the protocols each case goes over.
var normProtos = []string{"h1", "h2c", "h2"}

// normGet sends target over HTTP/1.1 (raw bytes), h2c or h2 over TLS
// (net/http's client, whose :path is the URL's opaque part as given) and
// returns the status.
func normGet(t *testing.T, proto string, e *normEdge, target string) int {
	t.Helper()
	if proto == "h1" {
		resp, _ := rawExchange(t, e.plain, "GET "+target+" HTTP/1.1\r\nHost: edge.example\r\nConnection: close\r\n\r\n")
		return resp.StatusCode
	}
	scheme, addr, c := "https", e.tls, e.h2
	if proto == "h2c" {
		scheme, addr, c = "http", e.plain, &http.Client{Timeout: testTimeout, Transport: testnet.H2Transport(nil)}
		defer c.CloseIdleConnections()
	}
	req, err := http.NewRequest("GET", scheme+"://"+addr+"/", nil)
	if err != nil {
		t.Fatal(err)
	}
	// Opaque keeps the target's bytes: URL.RequestURI sends them as the
	// :path ("//x" would read as an authority, hence the scheme form).
	req.URL.Opaque = "//" + addr + target
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("h2c %s: %v", target, err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.ProtoMajor != 2 {
		t.Fatalf("h2c %s: answered over %s", target, resp.Proto)
	}
	return resp.StatusCode
}

var adminSpellings = []string{
	"/pub/../admin/x",
	"//admin/x",
	"/%61dmin/x",
	"/pub/%2e%2e/admin/x",
	"/pub/%2E%2E/%61dmin//x?q=1",
	"/files/../admin/x",            // the capture would be "../admin/x"
	"/files/%2e%2e/%2e%2e/admin/x", // likewise, escaped
	"/raw/../admin/x",              // a PathAsSent route is still matched normalised
	"http://edge.example/pub/../admin/x",
}

// TestPathNormalizedBeforeRouting: every spelling of an admin path is
// denied by the /admin/ route (403) and none reaches the backend.
func TestPathNormalizedBeforeRouting(t *testing.T) {
	testenv.CheckGoroutines(t)
	rec := startRecorder(t)
	e := startNormProxy(t, rec.addr, pathnorm.Options{})
	for _, proto := range normProtos {
		for _, target := range adminSpellings {
			if proto != "h1" && !strings.HasPrefix(target, "/") {
				continue // :path is origin-form
			}
			if st := normGet(t, proto, e, target); st != 403 {
				t.Errorf("%s %s: status %d, want 403 (denied)", proto, target, st)
			}
			for _, u := range rec.take() {
				t.Errorf("%s %s reached the backend as %q (admin: %v)", proto, target, u, reachesAdmin(u))
			}
		}
	}
}

// TestPathNormalizedForwarded: what the backend gets is the normalised
// target (query untouched), the regex rewrite works on it, a PathAsSent
// route forwards the bytes as sent, and %2F is kept (hex upper-cased).
func TestPathNormalizedForwarded(t *testing.T) {
	testenv.CheckGoroutines(t)
	rec := startRecorder(t)
	e := startNormProxy(t, rec.addr, pathnorm.Options{})
	for _, proto := range normProtos {
		for _, c := range []struct{ in, want string }{
			{"/pub/./a//b/../c?x=/../y", "/pub/a/c?x=/../y"},
			{"/%70ub/%7e%41", "/pub/~A"},
			{"/files/a/../b", "/static/b"},
			{"/raw//a/./b%2fc", "/raw//a/./b%2fc"},
			{"/pub/a%2fb%5c", "/pub/a%2Fb%5C"},
		} {
			if st := normGet(t, proto, e, c.in); st != 200 {
				t.Errorf("%s %s: status %d", proto, c.in, st)
			}
			if got := rec.take(); len(got) != 1 || got[0] != c.want {
				t.Errorf("%s %s: backend got %q, want %q", proto, c.in, got, c.want)
			}
		}
	}
}

// TestPathNormalizationKeys: normalize_path: false forwards the target as
// sent (the attack works again: the key is what turns the protection
// off), merge_slashes: false keeps "//", and escaped_slashes: reject
// answers 400 without reaching the backend.
func TestPathNormalizationKeys(t *testing.T) {
	testenv.CheckGoroutines(t)
	rec := startRecorder(t)
	off := startNormProxy(t, rec.addr, pathnorm.Options{Off: true})
	keep := startNormProxy(t, rec.addr, pathnorm.Options{KeepSlashes: true})
	reject := startNormProxy(t, rec.addr, pathnorm.Options{EscapedSlashes: pathnorm.Reject})
	for _, proto := range normProtos {
		for _, c := range []struct {
			e      *normEdge
			in     string
			status int
			want   string // "" : nothing reaches the backend
		}{
			{off, "/pub/../admin/x", 200, "/pub/../admin/x"},
			{off, "/%61dmin/x", 200, "/%61dmin/x"},
			{keep, "/pub//a/./b", 200, "/pub//a/b"},
			{reject, "/pub/a%2fb", 400, ""},
			{reject, "/pub/a%5Cb", 400, ""},
			{reject, "/pub/a%20b", 200, "/pub/a%20b"},
		} {
			if st := normGet(t, proto, c.e, c.in); st != c.status {
				t.Errorf("%s %s: status %d, want %d", proto, c.in, st, c.status)
			}
			got := rec.take()
			if c.want == "" && len(got) != 0 || c.want != "" && (len(got) != 1 || got[0] != c.want) {
				t.Errorf("%s %s: backend got %q, want %q", proto, c.in, got, c.want)
			}
		}
	}
}
