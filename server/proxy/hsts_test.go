package proxy

import (
	"crypto/tls"
	"net/http"
	"testing"
	"time"

	"github.com/simdedge/simdedge/internal/testcert"
	"github.com/simdedge/simdedge/internal/testenv"
	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/internal/servetest"
	"github.com/simdedge/simdedge/server/router"
)

// TestHSTSProxyRoute: a proxy route with HSTS adds Strict-Transport-Security
// to the upstream's responses on a TLS listener, before the upstream's own
// field, and not on a plain listener (the loop-proxy run proxies the plain
// requests on the loop).
func TestHSTSProxyRoute(t *testing.T) {
	testenv.CheckGoroutines(t)
	o := startOrigin(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Strict-Transport-Security", "max-age=1")
		w.Write([]byte("origin"))
	}))
	up := newUpstream(t, UpstreamOptions{Targets: []string{o.addr}})
	tab, err := router.New([]router.Route{{Handler: router.HSTS(New(up, Options{}), router.HSTSPolicy{MaxAge: 600})}})
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
	for _, tc := range []struct {
		url  string
		want []string
	}{
		{"http://" + plainAddr + "/", []string{"max-age=1"}},
		{"https://" + secureAddr + "/", []string{"max-age=600", "max-age=1"}},
	} {
		for i := range 2 { // a fresh and a pooled upstream connection
			resp, err := c.Get(tc.url)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			got := resp.Header.Values("Strict-Transport-Security")
			if resp.StatusCode != 200 || len(got) != len(tc.want) || got[0] != tc.want[0] {
				t.Errorf("%s (%d): status %d, Strict-Transport-Security %q, want %q", tc.url, i, resp.StatusCode, got, tc.want)
			}
		}
	}
}
