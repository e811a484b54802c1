package stdhttp

import (
	"context"
	"io"
	"net/http"
	"net/url"

	phttp "github.com/simdedge/simdedge/parse/http"
	"github.com/simdedge/simdedge/server"
)

// newRequest builds the *http.Request of r, with copies of its head.
func newRequest(ctx context.Context, r *server.Request) (*http.Request, error) {
	target := string(r.Target())
	method := string(r.Method())
	var u *url.URL
	var err error
	if method == http.MethodConnect && len(target) > 0 && target[0] != '/' {
		u = &url.URL{Host: target}
	} else if u, err = url.ParseRequestURI(target); err != nil {
		return nil, err
	}
	h := make(http.Header, len(r.Headers()))
	for _, f := range r.Headers() {
		k := http.CanonicalHeaderKey(string(f.Name))
		if k == "Host" {
			continue // net/http moves Host to Request.Host
		}
		h[k] = append(h[k], string(f.Value))
	}
	head := r.Head()
	req := (&http.Request{
		Method:     method,
		URL:        u,
		RequestURI: target,
		Header:     h,
		Host:       string(r.Host()),
		Close:      head.Close,
		Body:       io.NopCloser(r.Body()),
	}).WithContext(ctx)
	if u.Host != "" {
		req.Host = u.Host
	}
	switch {
	case r.HTTP2():
		req.ProtoMajor, req.ProtoMinor, req.Proto = 2, 0, "HTTP/2.0"
	case head.Version == phttp.HTTP10:
		req.ProtoMajor, req.ProtoMinor, req.Proto = 1, 0, "HTTP/1.0"
	default:
		req.ProtoMajor, req.ProtoMinor, req.Proto = 1, 1, "HTTP/1.1"
	}
	switch head.Body {
	case phttp.BodyLength:
		req.ContentLength = head.ContentLength
		if req.ContentLength == 0 {
			req.Body = http.NoBody
		}
	case phttp.BodyChunked:
		req.ContentLength = -1
		req.TransferEncoding = []string{"chunked"}
	default:
		req.Body = http.NoBody
	}
	if a := r.RemoteAddr(); a != nil {
		req.RemoteAddr = a.String()
	}
	if cs, ok := r.TLSConnectionState(); ok {
		req.TLS = &cs
	}
	return req, nil
}
