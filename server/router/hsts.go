package router

import (
	"strconv"

	"github.com/simdedge/simdedge/server"
)

// HSTS (RFC 6797) per route, a step of its plan (server.Plan.HSTS): the
// Strict-Transport-Security field is added only to responses on TLS
// connections, on every engine and proxy path (the server's plan runner
// adds it).

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

// HSTS gives h the HSTS policy p, a step of the plan of the route h
// serves (steps.go).
func HSTS(h server.Handler, p HSTSPolicy) server.Handler {
	v := p.Value()
	return addStep(h, func(pl *server.Plan) bool {
		if pl.HSTS != "" {
			return false
		}
		pl.HSTS = v
		return true
	})
}
