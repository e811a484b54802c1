package router

import (
	"strconv"

	"github.com/simdedge/simdedge/server"
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
// Strict-Transport-Security: p. The wrapper keeps h's Inliner and
// LoopProxier behaviour on plain connections; TLS requests run h on
// goroutines (where the field is added).
func HSTS(h server.Handler, p HSTSPolicy) server.Handler {
	return &hsts{h: h, value: p.Value()}
}

type hsts struct {
	h     server.Handler
	value string
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
	if !ok || r.TLS() {
		return nil
	}
	return in.InlineHandler(r)
}

// LoopProxy implements server.LoopProxier.
func (s *hsts) LoopProxy(r *server.Request) server.LoopUpstream {
	lp, ok := s.h.(server.LoopProxier)
	if !ok || r.TLS() {
		return nil
	}
	return lp.LoopProxy(r)
}
