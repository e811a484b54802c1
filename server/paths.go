package server

import (
	"sync"
	"sync/atomic"

	phttp "github.com/simdedge/simdedge/parse/http"
	"github.com/simdedge/simdedge/server/pathnorm"
)

// Path normalisation (issue 27, item 4; the policy is server/pathnorm).
// Every engine calls normalizeTarget where a request's target is fixed:
// parseHead after each successful parse of an HTTP/1.1 head (the
// goroutine engine, the event loop before its route lookup and its proxy,
// message transports, envelopes, Clone), and the HTTP/2 stream once its
// pseudo-headers are decoded. From then on Target, URL, the router, the
// policies, Go handlers, files and both proxy paths see the normalised
// target; SentTarget and the access log keep the target as sent.

// parseHead parses the head at buf into r with p and normalises its
// target with o. A target that o refuses gives pathnorm's error, which
// phttp.StatusFor answers 400.
func (r *Request) parseHead(p *phttp.Parser, buf []byte, o *pathnorm.Options) (int, error) {
	n, err := p.ParseRequest(buf, &r.head)
	if err != nil {
		return n, err
	}
	return n, r.normalizeTarget(o)
}

// normalizeTarget replaces r's target by its normal form (pathnorm.Target)
// in r's own buffer, keeping the target as sent for SentTarget and
// SendAsSent. It must run once after each parse of the head: it forgets
// what an earlier parse left.
func (r *Request) normalizeTarget(o *pathnorm.Options) error {
	r.sentRaw = nil
	t, changed, err := pathnorm.Target(r.normBuf, r.head.Target, o)
	if err != nil {
		return err
	}
	if changed {
		r.normBuf = t
		r.sentRaw = r.head.Target
		r.head.Target = t
		r.urlDone, r.urlErr = false, nil
	}
	return nil
}

// PathNormalized reports whether the request's target was changed by
// path normalisation (SentTarget then differs from Target).
func (r *Request) PathNormalized() bool { return r.sentRaw != nil }

// SendAsSent makes Target, and so what a proxy forwards, the target as
// the client sent it, before normalisation (a route with
// normalize_path: false; the route was matched on the normalised one).
// It does nothing if normalisation changed nothing.
func (r *Request) SendAsSent() {
	if r.sentRaw != nil {
		r.head.Target = r.sentRaw
		r.urlDone, r.urlErr = false, nil
	}
}

// listenerPaths holds the listeners' own Options.Paths
// (SetListenerPaths): an immutable map behind an atomic pointer, read
// once per accepted connection.
type listenerPaths struct {
	mu  sync.Mutex // serialises writers
	cur atomic.Pointer[map[any]*pathnorm.Options]
}

// SetListenerPaths gives the kernel TCP listener l (as later given to
// ServeTCP, ServeTLS or ServeLoop) its own path normalisation in place of
// Options.Paths, for the connections it accepts from then on; nil returns
// it to Options.Paths.
func (s *Server) SetListenerPaths(l any, o *pathnorm.Options) {
	lp := &s.lpaths
	lp.mu.Lock()
	defer lp.mu.Unlock()
	m := map[any]*pathnorm.Options{}
	if old := lp.cur.Load(); old != nil {
		for k, v := range *old {
			m[k] = v
		}
	}
	if o == nil {
		delete(m, l)
	} else {
		c := *o
		m[l] = &c
	}
	lp.cur.Store(&m)
}

// pathsFor is the normalisation of listener l's new connection, given the
// settings it took: its own, else the server's.
func (s *Server) pathsFor(l any, cfg *settings) *pathnorm.Options {
	if m := s.lpaths.cur.Load(); m != nil {
		if o := (*m)[unwrapListener(l)]; o != nil {
			return o
		}
	}
	return &cfg.paths
}

// unwrapListener is the listener a caller gave ServeTCP, ServeTLS or
// ServeLoop: ServeStream sees it wrapped (TCPListener, a TLS listener).
func unwrapListener(l any) any {
	switch w := l.(type) {
	case netListener:
		return w.Listener
	case tlsListener:
		return w.Listener
	}
	return l
}

// pathRefused answers an HTTP/2 request whose path normalisation refused
// (HTTP/1.1 heads get the same answer from the parse error).
type pathRefused struct{}

func (pathRefused) ServeEdge(w *ResponseWriter, _ *Request) {
	w.WriteHeader(400)
	w.AddHeader("Content-Type", "text/plain; charset=utf-8")
	w.WriteString("Bad Request\n")
}
