package router

import (
	"net/netip"
	"strconv"
	"time"

	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/access"
	"github.com/simdedge/simdedge/server/ratelimit"
	"github.com/simdedge/simdedge/server/rewrite"
)

// Gate is a route's gatekeeping, wrapped around its handler (config.Build)
// and run in this order: allow/deny by client address (403), the rate
// limit (429 with Retry-After), on a route with Basic or forward auth a
// repeated Authorization field (400, access.Credentials), Basic auth (401
// with WWW-Authenticate), forward auth (the auth service's answer), then
// the route's handler. The policy lives in server/access and
// server/ratelimit; this wrapper only decides where each step runs:
//
//   - allow/deny and the rate limit run wherever the request is first
//     looked at, the event loop included (no blocking, no allocation for
//     a known key), once per request (server.Request.SetGateVerdict);
//   - Basic auth runs inline when the credentials are missing (401) or
//     were verified before (access.Basic's cache); credentials that need
//     bcrypt hand the request to a goroutine, as a Go handler does;
//   - forward auth always runs on a goroutine (a network round trip).
//
// A route with a gate keeps its handler's Inliner and LoopProxier for the
// requests the gate lets through on the loop.
type GatePolicy struct {
	// Rules are the allow and deny lists (deny wins).
	Rules access.Rules
	// Limit is the rate limiter (nil: none); LimitHeader names the
	// field whose value is the key ("" for the client address). A
	// request without that field is keyed by its client address.
	Limit       *ratelimit.Limiter
	LimitHeader string
	// Basic checks Basic credentials (nil: none).
	Basic *access.Basic
	// Forward asks an auth service (nil: none).
	Forward *ForwardAuth
}

// Gate wraps h with p.
func Gate(h server.Handler, p GatePolicy) server.Handler {
	g := &gate{h: h, p: p}
	g.reject.g = g
	g.challenge.g = g
	return g
}

type gate struct {
	h server.Handler
	p GatePolicy
	// reject and challenge answer on the loop; made once, so that a
	// refusal allocates nothing.
	reject    gateReject
	challenge gateChallenge
}

const (
	statusBadRequest      = 400
	statusForbidden       = 403
	statusTooManyRequests = 429
	statusUnauthorized    = 401
	// maxRetryAfter caps Retry-After (seconds) so that a tiny rate
	// cannot produce an absurd value; a client may retry then.
	maxRetryAfter = 24 * 60 * 60
	// ipKeyLen fits an address's text form (IPv6 with a zone is
	// refused earlier) for the rate limiter's key.
	ipKeyLen = 48
)

// admit takes the admission decision once per request and returns its
// status (0: admitted).
func (g *gate) admit(r *server.Request) int {
	if done, st, _ := r.GateVerdict(); done {
		return st
	}
	status, retry := 0, 0
	if g.p.Rules.Active() && g.p.Rules.Check(r.ClientIP()) == access.Denied {
		status = statusForbidden
	} else if g.p.Limit != nil {
		var kb [ipKeyLen]byte
		var key []byte
		if g.p.LimitHeader != "" {
			key, _ = r.Header(g.p.LimitHeader)
		}
		if key == nil {
			key = rateKey(r.ClientIP()).AppendTo(kb[:0])
		}
		if ok, wait := g.p.Limit.Allow(key); !ok {
			status = statusTooManyRequests
			retry = int(min((wait+time.Second-1)/time.Second, maxRetryAfter))
			retry = max(retry, 1)
		}
	}
	if status == 0 && (g.p.Basic != nil || g.p.Forward != nil) {
		if _, single := access.Credentials(r.Headers()); !single {
			status = statusBadRequest
		}
	}
	r.SetGateVerdict(status, retry)
	return status
}

// ipv6ClientBits: an IPv6 client is limited by its /64, since one host
// usually holds a whole /64 and could otherwise take a fresh bucket per
// address (as server.Limits.MaxConnsPerIP counts it).
const ipv6ClientBits = 64

// rateKey is the address a client is rate-limited under.
func rateKey(a netip.Addr) netip.Addr {
	if a.Is6() {
		p, _ := a.WithZone("").Prefix(ipv6ClientBits)
		return p.Addr()
	}
	return a
}

// authorization is the request's Authorization value (nil if absent);
// admit refused the request before if it had more than one.
func authorization(r *server.Request) []byte {
	v, _ := access.Credentials(r.Headers())
	return v
}

func (g *gate) ServeEdge(w *server.ResponseWriter, r *server.Request) {
	if g.admit(r) != 0 {
		g.reject.ServeEdge(w, r)
		return
	}
	if g.p.Basic != nil && !g.p.Basic.Verify(authorization(r)) {
		g.challenge.ServeEdge(w, r)
		return
	}
	if g.p.Forward != nil && !g.p.Forward.Check(w, r) {
		return // the auth service's answer was sent
	}
	g.h.ServeEdge(w, r)
}

// InlineHandler implements server.Inliner.
func (g *gate) InlineHandler(r *server.Request) server.Handler {
	if g.admit(r) != 0 {
		return &g.reject
	}
	if g.p.Basic != nil {
		switch g.p.Basic.Lookup(authorization(r)) {
		case access.Missing:
			return &g.challenge
		case access.Unverified:
			return nil // bcrypt on a goroutine
		}
	}
	if g.p.Forward != nil {
		return nil
	}
	if in, ok := g.h.(server.Inliner); ok {
		return in.InlineHandler(r)
	}
	return nil
}

// LoopProxy implements server.LoopProxier.
func (g *gate) LoopProxy(r *server.Request) server.LoopUpstream {
	if g.admit(r) != 0 || g.p.Forward != nil ||
		g.p.Basic != nil && g.p.Basic.Lookup(authorization(r)) != access.Cached {
		return nil
	}
	if lp, ok := g.h.(server.LoopProxier); ok {
		return lp.LoopProxy(r)
	}
	return nil
}

// gateReject answers a request the admission refused (400, 403 or 429).
type gateReject struct{ g *gate }

func (x *gateReject) ServeEdge(w *server.ResponseWriter, r *server.Request) {
	_, status, retry := r.GateVerdict()
	if status == statusTooManyRequests {
		var b [12]byte
		w.AddHeaderBytes(retryAfterName, strconv.AppendInt(b[:0], int64(retry), 10))
		w.AddHeader("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(statusTooManyRequests)
		w.WriteString("too many requests\n")
		return
	}
	if status == statusBadRequest {
		w.AddHeader("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(statusBadRequest)
		w.WriteString("more than one Authorization field\n")
		return
	}
	w.AddHeader("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(statusForbidden)
	w.WriteString("forbidden\n")
}

var retryAfterName = []byte("Retry-After")

// gateChallenge answers 401 with the Basic challenge.
type gateChallenge struct{ g *gate }

func (x *gateChallenge) ServeEdge(w *server.ResponseWriter, r *server.Request) {
	w.AddHeader("WWW-Authenticate", x.g.p.Basic.Challenge())
	w.AddHeader("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(statusUnauthorized)
	w.WriteString("unauthorized\n")
}

// templates passes h's path_regex templates on (captureUser), so that a
// gated redirect still gets its captures taken.
func (g *gate) templates() []*rewrite.Template {
	if cu, ok := g.h.(captureUser); ok {
		return cu.templates()
	}
	return nil
}
