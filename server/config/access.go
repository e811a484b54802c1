package config

import (
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/simdedge/simdedge/internal/ascii"
	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/access"
	"github.com/simdedge/simdedge/server/ratelimit"
	"github.com/simdedge/simdedge/server/router"
	"go.yaml.in/yaml/v3"
)

// Client identity and gatekeeping (issue 23):
//
//	trusted_proxies: ["10.0.0.0/8"]        # top level
//	listeners:
//	  - {address: ":80", proxy_protocol: true, allow: [...], deny: [...]}
//	routes:
//	  - match: {path_prefix: /api/}
//	    allow: ["192.0.2.0/24"]
//	    deny: ["192.0.2.66/32"]
//	    rate_limit: {key: client_ip, rate: 100, burst: 200}
//	    basic_auth: {realm: edge, users: {alice: "$2a$10$..."}}
//	    forward_auth: {url: "http://127.0.0.1:9100/auth", copy_headers: [X-User]}
//	    proxy: {upstream: api}
//
// trusted_proxies (default: none) decides whose X-Forwarded-For is
// believed for the client address (allow/deny, rate_limit keys, the
// proxy's X-Forwarded-For) and who may send PROXY protocol headers. allow
// and deny are CIDR prefixes or addresses; deny wins over allow, and with
// an allow list every other address is refused (403 per route; per
// listener the connection is closed before anything is read). rate_limit:
// rate in requests per second (> 0), burst (default: rate rounded up, at
// least 1), key client_ip (default) or header:NAME, max_keys (default
// ratelimit.DefaultMaxKeys); limits are per instance. basic_auth: realm
// (default "simdedge") and users mapping names to bcrypt hashes.
// forward_auth: url, copy_headers, timeout (default 5s).
//
//	upstreams:
//	  - {name: api, targets: ["10.0.0.5:80"], send_proxy_protocol: v2}
//
// send_proxy_protocol (v1 or v2, default none) sends a PROXY header naming
// the client connection before each request; such upstreams get a new
// connection per request and are proxied on goroutines (proxy/sendproxy.go).

// RateLimit is a route's rate_limit.
type RateLimit struct {
	Key     string  `yaml:"key,omitempty"`
	Rate    float64 `yaml:"rate,omitempty"`
	Burst   int     `yaml:"burst,omitempty"`
	MaxKeys int     `yaml:"max_keys,omitempty"`
	// Service is the global limit (ratelimit_service.go).
	Service *RateLimitService `yaml:"service,omitempty"`
}

// BasicAuth is a route's basic_auth.
type BasicAuth struct {
	Realm string            `yaml:"realm"`
	Users map[string]string `yaml:"users"`
}

// ForwardAuth is a route's forward_auth.
type ForwardAuth struct {
	URL         string   `yaml:"url"`
	CopyHeaders []string `yaml:"copy_headers,omitempty,flow"`
	Timeout     Duration `yaml:"timeout"`
}

// Defaults of the gatekeeping keys.
const (
	DefaultRateLimitKey = "client_ip"
	DefaultBasicRealm   = "simdedge"
	headerKeyPrefix     = "header:"
)

// cidrs decodes a list of CIDR prefixes, checking each entry.
func (d *decoder) cidrs(dst *[]string) func(*yaml.Node, string) {
	return func(v *yaml.Node, key string) {
		var list []string
		d.strings(&list)(v, key)
		for i, s := range list {
			if _, _, err := access.ParsePrefixes([]string{s}); err != nil {
				at := v
				if i < len(v.Content) {
					at = v.Content[i]
				}
				d.fail(at, fmt.Sprintf("%s[%d]", key, i), "must be an IP address or CIDR prefix")
				return
			}
		}
		*dst = list
	}
}

func (d *decoder) float(dst *float64) func(*yaml.Node, string) {
	return func(v *yaml.Node, key string) {
		f, err := strconv.ParseFloat(v.Value, 64)
		if v.Kind != yaml.ScalarNode || err != nil {
			d.fail(v, key, "must be a number")
			return
		}
		*dst = f
	}
}

func (d *decoder) rateLimit(dst **RateLimit) func(*yaml.Node, string) {
	return func(v *yaml.Node, key string) {
		rl := &RateLimit{}
		*dst = rl
		var burst, maxKeys int64
		d.fields(v, key, map[string]func(*yaml.Node, string){
			"key": func(v *yaml.Node, key string) {
				d.str(&rl.Key)(v, key)
				if rl.Key != DefaultRateLimitKey && !(strings.HasPrefix(rl.Key, headerKeyPrefix) && ascii.IsToken(rl.Key[len(headerKeyPrefix):])) {
					d.fail(v, key, `must be "client_ip" or "header:NAME"`)
				}
			},
			"rate": func(v *yaml.Node, key string) {
				d.float(&rl.Rate)(v, key)
				if !(rl.Rate > 0) || rl.Rate > maxRate {
					d.fail(v, key, "must be a positive number of requests per second, at most 1e9")
				}
			},
			"burst":    d.integer(&burst),
			"max_keys": d.integer(&maxKeys),
			"service":  d.rateLimitService(&rl.Service),
		})
		rl.Burst, rl.MaxKeys = int(min(burst, maxBurst)), int(min(maxKeys, maxRateKeys))
		if rl.Rate == 0 && rl.Service == nil {
			d.fail(v, key+".rate", "missing (or give a service)")
		}
	}
}

// Bounds of rate_limit (beyond them a value is a typo).
const (
	maxRate     = 1e9
	maxBurst    = 1 << 30
	maxRateKeys = 1 << 24
)

func (d *decoder) basicAuth(dst **BasicAuth) func(*yaml.Node, string) {
	return func(v *yaml.Node, key string) {
		b := &BasicAuth{}
		*dst = b
		d.fields(v, key, map[string]func(*yaml.Node, string){
			"realm": d.str(&b.Realm),
			"users": func(v *yaml.Node, key string) {
				if v.Kind != yaml.MappingNode {
					d.fail(v, key, "must be a mapping of user names to bcrypt hashes")
					return
				}
				b.Users = map[string]string{}
				for i := 0; i+1 < len(v.Content); i += 2 {
					var h string
					k := join(key, v.Content[i].Value)
					d.str(&h)(v.Content[i+1], k)
					if _, err := access.NewBasic("", map[string]string{"u": h}); err != nil {
						// Never echo the value: it may be a password.
						d.fail(v.Content[i+1], k, "must be a bcrypt hash ($2a$, $2b$ or $2y$)")
					}
					b.Users[v.Content[i].Value] = h
				}
			},
		})
		if len(b.Users) == 0 {
			d.fail(v, key+".users", "needs at least one user")
		}
	}
}

func (d *decoder) forwardAuth(dst **ForwardAuth) func(*yaml.Node, string) {
	return func(v *yaml.Node, key string) {
		f := &ForwardAuth{}
		*dst = f
		d.fields(v, key, map[string]func(*yaml.Node, string){
			"url": func(v *yaml.Node, key string) {
				d.str(&f.URL)(v, key)
				if _, err := router.NewForwardAuth(router.ForwardAuthOptions{URL: f.URL}); err != nil {
					d.fail(v, key, "must be an absolute http:// or https:// URL")
				}
			},
			"copy_headers": func(v *yaml.Node, key string) {
				d.strings(&f.CopyHeaders)(v, key)
				for i, h := range f.CopyHeaders {
					if !ascii.IsToken(h) {
						d.fail(v, fmt.Sprintf("%s[%d]", key, i), "must be a header field name")
					}
				}
			},
			"timeout": d.duration(&f.Timeout),
		})
		if f.URL == "" {
			d.fail(v, key+".url", "missing")
		}
	}
}

// withDefaults fills the defaults of a route's gatekeeping keys.
func (r Route) gateDefaults() Route {
	if r.RateLimit != nil && r.RateLimit.Rate > 0 {
		rl := *r.RateLimit
		if rl.Key == "" {
			rl.Key = DefaultRateLimitKey
		}
		if rl.Burst == 0 {
			rl.Burst = max(1, int(rl.Rate+0.999999))
		}
		if rl.MaxKeys == 0 {
			rl.MaxKeys = ratelimit.DefaultMaxKeys
		}
		r.RateLimit = &rl
	}
	if r.RateLimit != nil && r.RateLimit.Service != nil {
		rl := *r.RateLimit
		rl.Service = rl.Service.withDefaults()
		r.RateLimit = &rl
	}
	if r.BasicAuth != nil && r.BasicAuth.Realm == "" {
		b := *r.BasicAuth
		b.Realm = DefaultBasicRealm
		r.BasicAuth = &b
	}
	if r.ForwardAuth != nil && r.ForwardAuth.Timeout == 0 {
		f := *r.ForwardAuth
		f.Timeout = Duration(router.DefaultForwardAuthTimeout)
		r.ForwardAuth = &f
	}
	return r
}

// gate wraps h with the route's gatekeeping, if it has any.
func (r *Route) gate(h server.Handler, log *slog.Logger) (server.Handler, error) {
	e := r.gateDefaults()
	var p router.GatePolicy
	any := false
	if len(e.Allow)+len(e.Deny) > 0 {
		allow, _, err := access.ParsePrefixes(e.Allow)
		if err != nil {
			return nil, err
		}
		deny, _, err := access.ParsePrefixes(e.Deny)
		if err != nil {
			return nil, err
		}
		p.Rules, any = access.Rules{Allow: allow, Deny: deny}, true
	}
	if rl := e.RateLimit; rl != nil && rl.Service != nil {
		g, err := rl.Service.client(log)
		if err != nil {
			return nil, err
		}
		p.Global, any = g, true
	}
	if rl := e.RateLimit; rl != nil && rl.Rate > 0 {
		l, err := ratelimit.New(ratelimit.Options{Rate: rl.Rate, Burst: rl.Burst, MaxKeys: rl.MaxKeys})
		if err != nil {
			return nil, err
		}
		p.Limit, any = l, true
		p.LimitHeader = strings.TrimPrefix(rl.Key, headerKeyPrefix)
		if rl.Key == DefaultRateLimitKey {
			p.LimitHeader = ""
		}
	}
	if b := e.BasicAuth; b != nil {
		ba, err := access.NewBasic(b.Realm, b.Users)
		if err != nil {
			return nil, err
		}
		p.Basic, any = ba, true
	}
	if f := e.ForwardAuth; f != nil {
		fa, err := router.NewForwardAuth(router.ForwardAuthOptions{URL: f.URL, CopyHeaders: f.CopyHeaders, Timeout: time.Duration(f.Timeout), Logger: log})
		if err != nil {
			return nil, err
		}
		p.Forward, any = fa, true
	}
	if !any {
		return h, nil
	}
	return router.Gate(h, p), nil
}

// TrustedPrefixes is trusted_proxies as a set (nil when empty).
func (c *Config) TrustedPrefixes() *access.Prefixes {
	if len(c.TrustedProxies) == 0 {
		return nil
	}
	p, _, err := access.ParsePrefixes(c.TrustedProxies)
	if err != nil {
		return nil // Parse refused it already
	}
	return p
}

// Policy is the listener's server.ListenerPolicy (PROXY protocol,
// allow/deny).
func (l Listener) Policy() server.ListenerPolicy {
	allow, _, _ := access.ParsePrefixes(l.Allow) // checked by Parse
	deny, _, _ := access.ParsePrefixes(l.Deny)
	return server.ListenerPolicy{ProxyProtocol: l.ProxyProtocol, Rules: access.Rules{Allow: allow, Deny: deny}}
}

func (d *decoder) sendProxy(dst *string) func(*yaml.Node, string) {
	return func(v *yaml.Node, key string) {
		d.str(dst)(v, key)
		if *dst != "v1" && *dst != "v2" {
			d.fail(v, key, `must be "v1" or "v2"`)
		}
	}
}

// hasURLTarget: a target written as a URL (https://, rdma://).
func hasURLTarget(ts []Target) bool {
	for _, t := range ts {
		if strings.Contains(t.Address, "://") {
			return true
		}
	}
	return false
}

// sendProxyVersion is send_proxy_protocol as proxy.UpstreamOptions takes it.
func (u *Upstream) sendProxyVersion() int {
	switch u.SendProxyProtocol {
	case "v1":
		return 1
	case "v2":
		return 2
	}
	return 0
}
