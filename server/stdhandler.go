package server

import (
	"io"
	"net/http"
	"net/url"
	"strconv"

	phttp "github.com/simdedge/simdedge/parse/http"
)

// FromHTTP adapts a standard http.Handler. It builds an *http.Request (with
// copies of the head, as net/http's types require: this path allocates) and
// an http.ResponseWriter (also an http.Flusher) over the ResponseWriter.
// The request body streams from the connection.
func FromHTTP(h http.Handler) Handler { return stdAdapter{h} }

type stdAdapter struct{ h http.Handler }

func (a stdAdapter) ServeEdge(w *ResponseWriter, r *Request) {
	req, err := toHTTPRequest(r)
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		w.WriteString("bad request target\n")
		return
	}
	sw := &stdWriter{w: w, h: make(http.Header)}
	a.h.ServeHTTP(sw, req)
	sw.commit()
}

func toHTTPRequest(r *Request) (*http.Request, error) {
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
	req := &http.Request{
		Method:     method,
		URL:        u,
		RequestURI: target,
		Header:     h,
		Host:       string(r.Host()),
		Close:      head.Close,
		Body:       io.NopCloser(r.Body()),
	}
	if u.Host != "" {
		req.Host = u.Host
	}
	req.ProtoMajor, req.ProtoMinor, req.Proto = 1, 1, "HTTP/1.1"
	if head.Version == phttp.HTTP10 {
		req.ProtoMinor, req.Proto = 0, "HTTP/1.0"
	}
	switch head.Body {
	case phttp.BodyLength:
		req.ContentLength = head.ContentLength
	case phttp.BodyChunked:
		req.ContentLength = -1
		req.TransferEncoding = []string{"chunked"}
	default:
		req.Body = http.NoBody
	}
	if a := r.RemoteAddr(); a != nil {
		req.RemoteAddr = a.String()
	}
	return req, nil
}

// stdWriter is the http.ResponseWriter handed to a standard handler.
type stdWriter struct {
	w       *ResponseWriter
	h       http.Header
	started bool
}

func (s *stdWriter) Header() http.Header { return s.h }

func (s *stdWriter) WriteHeader(code int) {
	if s.started {
		return
	}
	if code >= 100 && code < 200 {
		return // informational responses are not forwarded
	}
	s.started = true
	for k, vs := range s.h {
		if k == "Content-Length" {
			if len(vs) > 0 {
				if n, err := strconv.ParseInt(vs[0], 10, 64); err == nil {
					s.w.SetContentLength(n)
				}
			}
			continue
		}
		for _, v := range vs {
			s.w.AddHeader(k, v)
		}
	}
	if _, ok := s.h["Content-Type"]; !ok {
		// net/http sniffs; a fixed default keeps responses allocation-
		// and buffering-free. Handlers that care set it.
		s.w.AddHeader("Content-Type", "text/plain; charset=utf-8")
	}
	s.w.WriteHeader(code)
}

func (s *stdWriter) Write(p []byte) (int, error) {
	if !s.started {
		s.WriteHeader(http.StatusOK)
	}
	return s.w.Write(p)
}

func (s *stdWriter) Flush() {
	if !s.started {
		s.WriteHeader(http.StatusOK)
	}
	s.w.Flush()
}

func (s *stdWriter) commit() {
	if !s.started {
		s.WriteHeader(http.StatusOK)
	}
}
