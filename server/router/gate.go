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

// GatePolicy is a route's gatekeeping, a step of its plan
// (server.Plan.Gate), run in this order: allow/deny by client address
// (403), the rate limit (429 with Retry-After), on a route with Basic or
// forward auth a repeated Authorization field (400,
// access.Credentials), the global limit (429, or its failure mode's
// 500), Basic auth (401 with WWW-Authenticate), forward auth (the auth
// service's answer), then the route's action. The policy
// lives in server/access and server/ratelimit; the server's plan runner
// decides where each step runs:
//
//   - allow/deny and the rate limit run wherever the request is first
//     looked at, the event loop included (no blocking, no allocation for
//     a known key), once per request (the runner keeps the verdict);
//   - Basic auth runs inline when the credentials are missing (401) or
//     were verified before (access.Basic's cache); credentials that need
//     bcrypt hand the request to a goroutine, as a Go handler does;
//   - forward auth and the global limit always run on a goroutine (a
//     network round trip).
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
	// Global asks a rate-limit service shared by every instance (nil:
	// none; server/ratelimit/rls, Envoy's protocol). It runs after the
	// admission (a request the local limit refused never costs a round
	// trip) and before the credentials, as nginx's limit_req runs before
	// its access phase; on a goroutine, as forward auth does.
	Global GlobalLimiter
}

// GlobalLimiter is a rate limit kept by a service outside the instance
// (server/ratelimit/rls over Envoy's rate-limit service protocol). It is
// an interface because that client is built only with -tags fleet (gRPC
// is large), and the router must not depend on it.
type GlobalLimiter interface {
	// Limit asks whether the request whose template variables are env is
	// over a limit. It blocks for a round trip, bounded by its timeout;
	// a service that cannot answer is its failure mode's business.
	// status 0 admits; else it is the status to answer (429 with
	// retryAfter, or the failure mode's refusal).
	Limit(env *rewrite.Env) (status int, retryAfter time.Duration)
}

// Gate gives h the gate p, a step of the plan of the route h serves
// (steps.go).
func Gate(h server.Handler, p GatePolicy) server.Handler {
	return addStep(h, func(pl *server.Plan) bool {
		if pl.Gate != nil {
			return false
		}
		pl.Gate = &gate{p: p}
		return true
	})
}

// gate is a GatePolicy as a server.Gate.
type gate struct{ p GatePolicy }

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

// Admit implements server.Gate: allow/deny, the rate limit and the
// single Authorization field. The plan runner asks once per request.
func (g *gate) Admit(r *server.Request) (status, retry int) {
	if g.p.Rules.Active() && g.p.Rules.Check(r.ClientIP()) == access.Denied {
		return statusForbidden, 0
	}
	if g.p.Limit != nil {
		var kb [ipKeyLen]byte
		var key []byte
		if g.p.LimitHeader != "" {
			key, _ = r.Header(g.p.LimitHeader)
		}
		if key == nil {
			key = rateKey(r.ClientIP()).AppendTo(kb[:0])
		}
		if ok, wait := g.p.Limit.Allow(key); !ok {
			retry = int(min((wait+time.Second-1)/time.Second, maxRetryAfter))
			return statusTooManyRequests, max(retry, 1)
		}
	}
	if g.p.Basic != nil || g.p.Forward != nil {
		if _, single := access.Credentials(r.Headers()); !single {
			return statusBadRequest, 0
		}
	}
	return 0, 0
}

// Pending implements server.Gate: forward auth and a global limit always
// need a goroutine (a network round trip), Basic auth when the
// credentials are not in its cache (bcrypt). Through it every engine
// sends such a request to a goroutine: the loop hands it off, HTTP/2 runs
// its stream on one, a message transport leaves it to one
// (server.Plan.inline, needsGoroutine).
func (g *gate) Pending(r *server.Request) bool {
	return g.p.Forward != nil || g.p.Global != nil ||
		g.p.Basic != nil && g.p.Basic.Lookup(authorization(r)) == access.Unverified
}

// Authorize implements server.Gate: the global limit, then the
// credentials.
func (g *gate) Authorize(w *server.ResponseWriter, r *server.Request) bool {
	if g.p.Global != nil && !g.global(w, r) {
		return false
	}
	if g.p.Basic != nil && !g.p.Basic.Verify(authorization(r)) {
		w.AddHeader("WWW-Authenticate", g.p.Basic.Challenge())
		w.AddHeader("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(statusUnauthorized)
		w.WriteString("unauthorized\n")
		return false
	}
	return g.p.Forward == nil || g.p.Forward.Check(w, r)
}

// global asks the rate-limit service about r; false means it answered w.
func (g *gate) global(w *server.ResponseWriter, r *server.Request) bool {
	var env rewrite.Env
	fillEnv(&env, r)
	status, wait := g.p.Global.Limit(&env)
	if status == 0 {
		return true
	}
	w.AddHeader("Content-Type", "text/plain; charset=utf-8")
	if status == statusTooManyRequests {
		secs := int64(min((wait+time.Second-1)/time.Second, maxRetryAfter))
		w.AddHeader("Retry-After", strconv.FormatInt(max(secs, 1), 10))
		w.WriteHeader(status)
		w.WriteString("too many requests\n")
		return false
	}
	w.WriteHeader(status)
	w.WriteString("rate limit service unavailable\n")
	return false
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
// Admit refused the request before if it had more than one.
func authorization(r *server.Request) []byte {
	v, _ := access.Credentials(r.Headers())
	return v
}
