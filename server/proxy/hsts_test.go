package proxy

import (
	"crypto/tls"
	"net/http"
	"testing"
	"time"

	"github.com/simdedge/simdedge/internal/testcert"
	"github.com/simdedge/simdedge/internal/testenv"
	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/internal/loopstat"
	"github.com/simdedge/simdedge/server/internal/servetest"
	"github.com/simdedge/simdedge/server/router"
)

// TestHSTSProxyRoute: a proxy route with HSTS adds Strict-Transport-Security
// to the upstream's responses on a TLS listener, before the upstream's own
// field, and not on a plain listener. The loop serves every one of these
// requests itself, TLS included: the inline route on the loop engines, the
// proxy route on the loop-proxy run (it handed TLS requests of an HSTS
// route to goroutines before the route's steps became its plan's, issue
// 28).
func TestHSTSProxyRoute(t *testing.T) {
	testenv.CheckGoroutines(t)
	o := startOrigin(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Strict-Transport-Security", "max-age=1")
		w.Write([]byte("origin"))
	}))
	up := newUpstream(t, UpstreamOptions{Targets: []string{o.addr}})
	tab, err := router.New([]router.Route{
		{Match: router.Match{Path: "/inline"}, Handler: router.HSTS(router.Respond(200, "inline", nil), router.HSTSPolicy{MaxAge: 300})},
		{Handler: router.HSTS(New(up, Options{}), router.HSTSPolicy{MaxAge: 600})},
	})
	if err != nil {
		t.Fatal(err)
	}
	ca := testcert.NewCA(t, "edge CA")
	leaf := ca.Leaf(t, "edge", []string{"edge.example"}, time.Time{}, time.Time{})
	s := server.New(server.Options{Handler: router.NewSwitch(tab), LoopProxy: testLoopProxy})
	plainAddr := servetest.Serve(t, s, testEngine)
	secureAddr := servetest.ServeTLS(t, s, testEngine, server.TLSOptions{Config: &tls.Config{Certificates: []tls.Certificate{leaf.TLS}}})
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool, ServerName: "edge.example"}}
	t.Cleanup(tr.CloseIdleConnections)
	c := &http.Client{Transport: tr, Timeout: testTimeout}
	handoffs := loopstat.Handoffs.Load()
	for _, tc := range []struct {
		url  string
		want []string
		// onLoop: the loop serves it without a hand-off.
		onLoop bool
	}{
		{"http://" + plainAddr + "/", []string{"max-age=1"}, testLoopProxy},
		{"https://" + secureAddr + "/", []string{"max-age=600", "max-age=1"}, testLoopProxy},
		{"https://" + secureAddr + "/inline", []string{"max-age=300"}, testEngine == server.EngineLoop},
		{"http://" + plainAddr + "/inline", nil, testEngine == server.EngineLoop},
	} {
		before := loopstat.Handoffs.Load()
		for i := range 2 { // a fresh and a pooled upstream connection
			resp, err := c.Get(tc.url)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			got := resp.Header.Values("Strict-Transport-Security")
			if resp.StatusCode != 200 || len(got) != len(tc.want) || len(got) > 0 && got[0] != tc.want[0] {
				t.Errorf("%s (%d): status %d, Strict-Transport-Security %q, want %q", tc.url, i, resp.StatusCode, got, tc.want)
			}
		}
		if n := loopstat.Handoffs.Load() - before; tc.onLoop && n != 0 {
			t.Errorf("%s: %d connections handed from the loop to goroutines, want 0 (served on the loop)", tc.url, n)
		}
		tr.CloseIdleConnections() // the next case on a new connection
	}
	if testEngine == server.EngineLoop && loopstat.Handoffs.Load() == handoffs && !testLoopProxy {
		// The goroutine proxy route: the count does move on a hand-off.
		t.Error("no hand-off counted on the loop engine for the proxy route")
	}
}
