package config

import (
	"github.com/simdedge/simdedge/server/router"
	"go.yaml.in/yaml/v3"
)

// HSTS is a route's Strict-Transport-Security policy (router.HSTSPolicy),
// sent only on TLS connections (RFC 6797 §7.2):
//
//	routes:
//	  - match: {path_prefix: /}
//	    proxy: {upstream: api}
//	    hsts: {max_age: 31536000, include_subdomains: true, preload: false}
//
// max_age is required (seconds; 0 tells clients to forget the policy);
// the others default to false. No route sends it unless configured.
type HSTS struct {
	MaxAge            int64 `yaml:"max_age"`
	IncludeSubdomains bool  `yaml:"include_subdomains"`
	Preload           bool  `yaml:"preload"`
}

// maxHSTSAge bounds max_age: two years (63072000 s) is what the preload
// list asks for; ten years leaves room and still catches a typo of units.
const maxHSTSAge = 10 * 365 * 24 * 60 * 60

func (d *decoder) hsts(dst **HSTS) func(*yaml.Node, string) {
	return func(v *yaml.Node, key string) {
		h := &HSTS{}
		*dst = h
		age := int64(-1)
		d.fields(v, key, map[string]func(*yaml.Node, string){
			"max_age": func(v *yaml.Node, key string) {
				d.integer(&age)(v, key)
				if age < 0 || age > maxHSTSAge {
					d.fail(v, key, "must be 0-315360000 seconds")
				}
			},
			"include_subdomains": d.flag(&h.IncludeSubdomains),
			"preload":            d.flag(&h.Preload),
		})
		if age < 0 {
			d.fail(v, key+".max_age", "missing")
			return
		}
		h.MaxAge = age
		if h.Preload && (h.MaxAge < preloadMinAge || !h.IncludeSubdomains) {
			d.fail(v, key+".preload", "needs include_subdomains and max_age of at least 31536000 (the preload list's rule)")
		}
	}
}

// preloadMinAge is the preload list's minimum max_age (one year).
const preloadMinAge = 365 * 24 * 60 * 60

// flag decodes a boolean into a plain bool.
func (d *decoder) flag(dst *bool) func(*yaml.Node, string) {
	return func(v *yaml.Node, key string) {
		var b *bool
		d.boolean(&b)(v, key)
		*dst = b != nil && *b
	}
}

func (h *HSTS) policy() router.HSTSPolicy {
	return router.HSTSPolicy{MaxAge: h.MaxAge, IncludeSubdomains: h.IncludeSubdomains, Preload: h.Preload}
}
