package server

import (
	"bufio"
	"fmt"
	"testing"

	"github.com/simdedge/simdedge/internal/testenv"
	"github.com/simdedge/simdedge/internal/testnet"
)

// challenger knows one token's key authorization for one host.
type challenger struct{ host, path, body string }

func (c challenger) HTTPChallenge(host, path []byte) ([]byte, bool) {
	if string(host) == c.host && string(path) == c.path {
		return []byte(c.body), true
	}
	return nil, false
}

// TestRedirectChallenges: a redirect listener with a challenger answers
// the ACME HTTP-01 request it knows with 200 and the key authorization
// (host without its port, GET only); everything else still gets the 308.
func TestRedirectChallenges(t *testing.T) {
	testenv.CheckGoroutines(t)
	s := New(Options{Handler: okHandler("not redirected")})
	l := testnet.Listen(t)
	ch := challenger{"a.example", "/.well-known/acme-challenge/tok", "tok.thumb"}
	done := make(chan error, 1)
	go func() { done <- s.ServeStream(RedirectHTTPSWithChallenges(l, "8443", ch)) }()
	defer func() {
		s.Close()
		<-done
	}()
	c := dial(t, l.Addr().String())
	br := bufio.NewReader(c)
	for _, tc := range []struct {
		method, host, target string
		status               int
		body                 string
	}{
		{"GET", "a.example:80", "/.well-known/acme-challenge/tok", 200, "tok.thumb"},
		{"GET", "a.example", "/.well-known/acme-challenge/tok", 200, "tok.thumb"},
		{"GET", "b.example", "/.well-known/acme-challenge/tok", 308, ""},   // another host
		{"GET", "a.example", "/.well-known/acme-challenge/other", 308, ""}, // unknown token
		{"HEAD", "a.example", "/.well-known/acme-challenge/tok", 308, ""},
		{"GET", "a.example", "/", 308, ""},
	} {
		fmt.Fprintf(c, "%s %s HTTP/1.1\r\nHost: %s\r\n\r\n", tc.method, tc.target, tc.host)
		resp, body := readResponse(t, br, tc.method)
		if resp.StatusCode != tc.status || (tc.status == 200 && (body != tc.body || resp.Header.Get("Content-Type") != "text/plain")) {
			t.Errorf("%s %s %s: %d %q", tc.method, tc.host, tc.target, resp.StatusCode, body)
		}
	}
}
