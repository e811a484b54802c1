package router

import (
	"crypto/tls"
	"net/http"
	"testing"
	"time"

	"github.com/simdedge/simdedge/internal/testcert"
	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/internal/servetest"
)

// TestHSTS: a route's Strict-Transport-Security is sent on TLS listeners
// only, and only by the routes that have it (issue 20, "Headers"), on
// each engine.
func TestHSTS(t *testing.T) {
	ca := testcert.NewCA(t, "edge CA")
	leaf := ca.Leaf(t, "edge", []string{"edge.example"}, time.Time{}, time.Time{})
	policy := HSTSPolicy{MaxAge: 31536000, IncludeSubdomains: true}
	tab, err := New([]Route{
		{Match: Match{Path: "/plain"}, Handler: Respond(200, "no hsts\n", nil)},
		{Match: Match{Path: "/hsts"}, Handler: HSTS(Respond(200, "hsts\n", nil), policy)},
		{Match: Match{Path: "/handler"}, Handler: HSTS(server.HandlerFunc(func(w *server.ResponseWriter, r *server.Request) {
			w.WriteString("handler\n")
		}), policy)},
	})
	if err != nil {
		t.Fatal(err)
	}
	s := server.New(server.Options{Handler: tab})
	plainAddr := servetest.Serve(t, s, testEngine)
	secureAddr := servetest.ServeTLS(t, s, testEngine, server.TLSOptions{Config: &tls.Config{Certificates: []tls.Certificate{leaf.TLS}}})
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool, ServerName: "edge.example"}}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	const want = "max-age=31536000; includeSubDomains"
	for _, tc := range []struct {
		url, hsts string
	}{
		{"http://" + plainAddr + "/hsts", ""},
		{"http://" + plainAddr + "/handler", ""},
		{"https://" + secureAddr + "/hsts", want},
		{"https://" + secureAddr + "/handler", want},
		{"https://" + secureAddr + "/plain", ""},
	} {
		resp, err := c.Get(tc.url)
		if err != nil {
			t.Fatalf("%s: %v", tc.url, err)
		}
		resp.Body.Close()
		if got := resp.Header.Values("Strict-Transport-Security"); resp.StatusCode != 200 || len(got) > 1 || resp.Header.Get("Strict-Transport-Security") != tc.hsts {
			t.Errorf("%s: status %d, Strict-Transport-Security %q, want %q", tc.url, resp.StatusCode, got, tc.hsts)
		}
	}
}

func TestHSTSValue(t *testing.T) {
	for _, tc := range []struct {
		p    HSTSPolicy
		want string
	}{
		{HSTSPolicy{MaxAge: 0}, "max-age=0"},
		{HSTSPolicy{MaxAge: 63072000, IncludeSubdomains: true, Preload: true}, "max-age=63072000; includeSubDomains; preload"},
	} {
		if got := tc.p.Value(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.p, got, tc.want)
		}
	}
}
