package edgeacme

import (
	"bytes"
	"net/http"
	"net/url"
)

// ChallengePrefix starts every HTTP-01 request path (RFC 8555 §8.3).
const ChallengePrefix = "/.well-known/acme-challenge/"

// HTTPChallenge answers an HTTP-01 validation request, a GET of path on
// host: the key authorization, and whether this Manager (or certmagic's
// process-wide challenge state) had one for that token and host. It
// allocates, which only challenge requests pay.
func (m *Manager) HTTPChallenge(host, path []byte) ([]byte, bool) {
	if !bytes.HasPrefix(path, []byte(ChallengePrefix)) {
		return nil, false
	}
	// certmagic's solver speaks net/http: hand it a request of that
	// shape and keep what it writes.
	r := &http.Request{
		Method: http.MethodGet,
		Host:   string(host),
		URL:    &url.URL{Path: string(path)},
		Header: http.Header{},
	}
	var rec recorder
	if !m.issuer.HandleHTTPChallenge(&rec, r) {
		return nil, false
	}
	return rec.body.Bytes(), true
}

// recorder is the http.ResponseWriter HandleHTTPChallenge writes the key
// authorization to.
type recorder struct {
	h    http.Header
	body bytes.Buffer
}

func (r *recorder) Header() http.Header {
	if r.h == nil {
		r.h = http.Header{}
	}
	return r.h
}

func (r *recorder) Write(p []byte) (int, error) { return r.body.Write(p) }

func (r *recorder) WriteHeader(int) {}
