package server

import (
	"bytes"
	"net"
)

// HTTPChallenger answers ACME HTTP-01 validation requests
// (edgeacme.Manager): the key authorization for a GET of path on host.
type HTTPChallenger interface {
	HTTPChallenge(host, path []byte) (body []byte, ok bool)
}

// acmeChallengePrefix starts every HTTP-01 path (RFC 8555 §8.3).
var acmeChallengePrefix = []byte("/.well-known/acme-challenge/")

// RedirectHTTPSWithChallenges is RedirectHTTPS whose listener also answers
// ACME HTTP-01 challenges through ch (the CA validates on port 80, which
// is the redirecting listener); other requests get the redirect.
func RedirectHTTPSWithChallenges(l net.Listener, httpsPort string, ch HTTPChallenger) StreamListener {
	return redirectListener{l, httpsPort, ch}
}

// serveChallenge answers r if it is an HTTP-01 validation ch knows.
func serveChallenge(ch HTTPChallenger, w *ResponseWriter, r *Request) bool {
	if ch == nil || !bytes.Equal(r.Method(), []byte("GET")) || !bytes.HasPrefix(r.Target(), acmeChallengePrefix) {
		return false
	}
	body, ok := ch.HTTPChallenge(hostWithoutPort(r.Host()), r.Target())
	if !ok {
		return false
	}
	w.AddHeader("Content-Type", "text/plain")
	w.SetContentLength(int64(len(body)))
	w.WriteHeader(200)
	w.Write(body)
	return true
}
