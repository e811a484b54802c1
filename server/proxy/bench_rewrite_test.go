package proxy

import (
	"regexp"
	"testing"

	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/rewrite"
	"github.com/simdedge/simdedge/server/router"
)

// BenchmarkRouteProxyPolicy: issue 23's speed case, the route of
// BenchmarkRouteProxyPlain with a regex match, a strip_prefix and header
// rewrites (a request field set from {client_ip}, one removed, and the
// upstream's Server removed from the response). The target: at most 10 %
// more per request than the plain route.
func BenchmarkRouteProxyPolicy(b *testing.B) {
	strip, _ := rewrite.StripPrefix("/api")
	req, err := rewrite.NewHeaderOps(rewrite.RequestSide, []rewrite.Field{{Name: "X-Client", Value: rewrite.MustTemplate("{client_ip}")}}, nil, []string{"X-Debug"})
	if err != nil {
		b.Fatal(err)
	}
	resp, err := rewrite.NewHeaderOps(rewrite.ResponseSide, nil, nil, []string{"Server"})
	if err != nil {
		b.Fatal(err)
	}
	benchRoute(b, benchRequest, func(h server.Handler) router.Route {
		return router.Route{Match: router.Match{PathRegex: regexp.MustCompile(`^/api/v[0-9]+/`)}, Handler: h,
			Policy: &router.Policy{Path: strip, Request: req, Response: resp}}
	})
}
