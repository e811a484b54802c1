package config

import (
	"strings"

	"go.yaml.in/yaml/v3"
)

// HTTP/2 upstreams (proxy.UpstreamOptions.HTTP2, server/proxy/h2up.go):
//
//	upstreams:
//	  - name: grpc
//	    targets: ["h2c://127.0.0.1:50051"]   # HTTP/2 with prior knowledge over TCP
//	  - name: grpc-tls
//	    targets: ["h2://10.0.0.5:443"]       # HTTP/2 over TLS (ALPN h2)
//	    tls: {ca: backend-ca.pem}            # optional, as for https:// targets
//
// An upstream's targets are all HTTP/2 or all HTTP/1.1. h2:// is TLS (the
// tls block applies as for https://), h2c:// is not (a tls block beside it
// is an error). Each target keeps one or a few multiplexed connections;
// max_conns_per_target caps its streams in flight. Such upstreams are
// proxied on goroutines on every engine.
const (
	schemeH2  = "h2://"
	schemeH2C = "h2c://"
)

// h2Scheme reports whether addr is written h2:// or h2c:// (scheme
// case-insensitive).
func h2Scheme(addr string) bool {
	for _, s := range []string{schemeH2, schemeH2C} {
		if len(addr) >= len(s) && strings.EqualFold(addr[:len(s)], s) {
			return true
		}
	}
	return false
}

// IsHTTP2 reports whether the upstream's targets speak HTTP/2.
func (u *Upstream) IsHTTP2() bool {
	for _, t := range u.Targets {
		if h2Scheme(t.Address) {
			return true
		}
	}
	return false
}

// validateUpstreamH2 checks that an upstream does not mix HTTP/2 targets
// with others.
func (d *decoder) validateUpstreamH2(at *yaml.Node, key string, u *Upstream) {
	h2 := 0
	for _, t := range u.Targets {
		if h2Scheme(t.Address) {
			h2++
		}
	}
	if h2 > 0 && h2 < len(u.Targets) {
		d.fail(at, key+".targets", "mixes h2:// or h2c:// targets with others")
	}
}
