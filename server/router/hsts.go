package router

import (
	"strconv"

	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/rewrite"
)

// HSTS (RFC 6797) per route. The Strict-Transport-Security field is added
// only to responses on TLS connections: §7.2 says a server must not send
// it over plain HTTP (a client ignores it there, and an attacker on the
// path could strip or forge it). It is added before the handler runs, so
// it comes first when an upstream sends its own (a client honours the
// first, §8.1).

// HSTSPolicy is a route's Strict-Transport-Security policy.
type HSTSPolicy struct {
	// MaxAge is how long, in seconds, a client keeps to HTTPS.
	MaxAge            int64
	IncludeSubdomains bool
	Preload           bool
}

// Value is the header field value, e.g. "max-age=31536000; includeSubDomains".
func (p HSTSPolicy) Value() string {
	v := "max-age=" + strconv.FormatInt(p.MaxAge, 10)
	if p.IncludeSubdomains {
		v += "; includeSubDomains"
	}
	if p.Preload {
		v += "; preload"
	}
	return v
}

// HSTS wraps h so that its responses on TLS connections carry
// Strict-Transport-Security: p. The wrapper keeps h's Inliner (on TLS
// connections too, which the event loop drives) and LoopProxier (plain
// requests only: the loop's proxy writes the upstream's head itself, so a
// TLS request of a proxy route with HSTS is proxied on goroutines, where
// ServeEdge adds the field).
func HSTS(h server.Handler, p HSTSPolicy) server.Handler {
	s := &hsts{h: h, value: p.Value()}
	s.inline.s = s
	return s
}

type hsts struct {
	h     server.Handler
	value string
	// inline serves the TLS requests h's InlineHandler accepts; made
	// once, so that answering one allocates nothing.
	inline hstsInline
}

const hstsField = "Strict-Transport-Security"

func (s *hsts) ServeEdge(w *server.ResponseWriter, r *server.Request) {
	if r.TLS() {
		w.AddHeader(hstsField, s.value)
	}
	s.h.ServeEdge(w, r)
}

// InlineHandler implements server.Inliner.
func (s *hsts) InlineHandler(r *server.Request) server.Handler {
	in, ok := s.h.(server.Inliner)
	if !ok {
		return nil
	}
	ih := in.InlineHandler(r)
	if ih == nil || !r.TLS() {
		return ih
	}
	return &s.inline
}

// hstsInline adds the field, then serves r with the handler h's
// InlineHandler gives (asked again: an Inliner answers from r alone, and
// holding its answer would take an allocation per request).
type hstsInline struct{ s *hsts }

func (x *hstsInline) ServeEdge(w *server.ResponseWriter, r *server.Request) {
	w.AddHeader(hstsField, x.s.value)
	if ih := x.s.h.(server.Inliner).InlineHandler(r); ih != nil {
		ih.ServeEdge(w, r)
		return
	}
	x.s.h.ServeEdge(w, r)
}

// LoopProxy implements server.LoopProxier.
func (s *hsts) LoopProxy(r *server.Request) server.LoopUpstream {
	lp, ok := s.h.(server.LoopProxier)
	if !ok || r.TLS() {
		return nil
	}
	return lp.LoopProxy(r)
}

// templates passes h's path_regex templates on (captureUser), so that a
// redirect wrapped for HSTS still gets its captures taken.
func (s *hsts) templates() []*rewrite.Template {
	if cu, ok := s.h.(captureUser); ok {
		return cu.templates()
	}
	return nil
}
