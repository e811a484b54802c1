package proxy

import (
	"crypto/tls"
	"encoding/base64"
	"io"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/simdedge/simdedge/internal/testcert"
	"github.com/simdedge/simdedge/internal/testenv"
	"github.com/simdedge/simdedge/internal/testnet"
	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/access"
	"github.com/simdedge/simdedge/server/internal/servetest"
	"github.com/simdedge/simdedge/server/router"
)

// TestDuplicateAuthorization (issue 27): a request with two Authorization
// fields on a route with Basic or forward auth gets 400 and reaches
// neither the origin nor the auth service, since the edge checks the
// first and a backend may read the last. Inline and proxy routes, over
// HTTP/1.1 (plain and TLS), h2c and h2 over TLS, on every engine and both
// proxy paths; the same credentials once are let through.
func TestDuplicateAuthorization(t *testing.T) {
	testenv.CheckGoroutines(t)
	var originHits, authHits atomic.Int32
	o := startOrigin(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		originHits.Add(1)
		io.WriteString(w, "origin")
	}))
	auth := startOrigin(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		authHits.Add(1)
		if r.Header.Get("Authorization") == "Bearer good" { // the first, as net/http reads it
			w.WriteHeader(204)
			return
		}
		w.WriteHeader(401)
	}))
	up := newUpstream(t, UpstreamOptions{Targets: []string{o.addr}})
	px := New(up, Options{})
	basic, err := access.NewBasic("edge", map[string]string{"alice": secretHash})
	if err != nil {
		t.Fatal(err)
	}
	fa, err := router.NewForwardAuth(router.ForwardAuthOptions{URL: "http://" + auth.addr + "/auth"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fa.Close)
	tab, err := router.New([]router.Route{
		{Match: router.Match{PathPrefix: "/basic/inline"}, Handler: router.Gate(router.Respond(200, "inline", nil), router.GatePolicy{Basic: basic})},
		{Match: router.Match{PathPrefix: "/basic/proxy"}, Handler: router.Gate(px, router.GatePolicy{Basic: basic})},
		{Match: router.Match{PathPrefix: "/fa/proxy"}, Handler: router.Gate(px, router.GatePolicy{Forward: fa})},
	})
	if err != nil {
		t.Fatal(err)
	}
	s := server.New(server.Options{Handler: tab, LoopProxy: testLoopProxy})
	ca := testcert.NewCA(t, "edge CA")
	leaf := ca.Leaf(t, "edge", []string{"edge.example"}, time.Time{}, time.Time{})
	plainAddr := servetest.ServeH2C(t, s, testEngine)
	secureAddr := servetest.ServeTLS(t, s, testEngine, server.TLSOptions{Config: &tls.Config{Certificates: []tls.Certificate{leaf.TLS}, NextProtos: []string{"h2", "http/1.1"}}})
	cfg := &tls.Config{ServerName: "edge.example", RootCAs: ca.Pool}
	clients := []struct {
		name, base string
		proto      int
		tr         *http.Transport
	}{
		{"http1", "http://" + plainAddr, 1, &http.Transport{}},
		{"http1-tls", "https://" + secureAddr, 1, &http.Transport{TLSClientConfig: cfg}},
		{"h2c", "http://" + plainAddr, 2, testnet.H2Transport(nil)},
		{"h2-tls", "https://" + secureAddr, 2, testnet.H2Transport(cfg)},
	}
	basicOf := func(userPass string) string { return "Basic " + base64.StdEncoding.EncodeToString([]byte(userPass)) }
	for _, cl := range clients {
		t.Run(cl.name, func(t *testing.T) {
			t.Cleanup(cl.tr.CloseIdleConnections)
			c := &http.Client{Transport: cl.tr, Timeout: testTimeout}
			do := func(path string, authz ...string) (int, string) {
				t.Helper()
				req, _ := http.NewRequest("GET", cl.base+path, nil)
				req.Header["Authorization"] = authz // sent as that many fields
				resp, body := get(t, c, req)
				if resp.ProtoMajor != cl.proto {
					t.Fatalf("%s: HTTP/%d, want HTTP/%d", path, resp.ProtoMajor, cl.proto)
				}
				return resp.StatusCode, string(body)
			}
			for _, rt := range []struct{ path, good, bad string }{
				{"/basic/inline", basicOf("alice:secret"), basicOf("mallory:x")},
				{"/basic/proxy", basicOf("alice:secret"), basicOf("mallory:x")},
				{"/fa/proxy", "Bearer good", "Bearer evil"},
			} {
				// Once first, so that Basic's cache knows the good
				// credentials and the loop could admit them inline.
				if st, body := do(rt.path, rt.good); st != 200 {
					t.Fatalf("%s with good credentials: %d %q", rt.path, st, body)
				}
				o0, a0 := originHits.Load(), authHits.Load()
				for _, pair := range [][]string{{rt.good, rt.bad}, {rt.bad, rt.good}, {rt.good, rt.good}} {
					if st, body := do(rt.path, pair...); st != 400 {
						t.Errorf("%s with %d Authorization fields: %d %q, want 400", rt.path, len(pair), st, body)
					}
				}
				if o1, a1 := originHits.Load(), authHits.Load(); o1 != o0 || a1 != a0 {
					t.Errorf("%s: refused requests reached the origin %d times and the auth service %d times", rt.path, o1-o0, a1-a0)
				}
			}
		})
	}
}
