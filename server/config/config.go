package config

import (
	"cmp"
	"errors"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/simdedge/simdedge/server/rewrite"
	"github.com/simdedge/simdedge/server/upstream/discover"
	"go.yaml.in/yaml/v3"
)

// Config is a parsed configuration. Zero fields take defaults (Defaults).
type Config struct {
	Listen string `yaml:"listen,omitempty"`
	// Engine serves the tcp listeners that name none, `listen` included:
	// "loop" or "goroutine" (DefaultEngine when empty).
	Engine string `yaml:"engine,omitempty"`
	// ProxyOnLoop: on the loop engine, proxy routes are served by the
	// event loop itself over non-blocking upstream connections
	// (server.Options.LoopProxy) instead of handing their connections to
	// goroutines. Nil means DefaultProxyOnLoop.
	ProxyOnLoop *bool      `yaml:"proxy_on_loop,omitempty"`
	Listeners   []Listener `yaml:"listeners,omitempty"`
	// proxyLine is the line of proxy_on_loop, for validate.
	proxyLine int
	Limits    Limits     `yaml:"limits"`
	Timeouts  Timeouts   `yaml:"timeouts"`
	HTTP2     HTTP2      `yaml:"http2"` // http2.go
	HTTP3     HTTP3      `yaml:"http3"` // http3.go
	Upstreams []Upstream `yaml:"upstreams,omitempty"`
	Routes    []Route    `yaml:"routes"`
	// Admin is the admin listener (admin.go); nil: off.
	Admin *Admin `yaml:"admin,omitempty"`
	// TrustedProxies: see access.go.
	TrustedProxies []string `yaml:"trusted_proxies,omitempty,flow"`
	// UntrustedForwarding: see forwarding.go.
	UntrustedForwarding string `yaml:"untrusted_forwarding,omitempty"`
	// AccessLog, RequestID and Trace: observe.go (nil: off, off, defaults).
	AccessLog *AccessLog `yaml:"access_log,omitempty"`
	RequestID *RequestID `yaml:"request_id,omitempty"`
	Trace     *Trace     `yaml:"trace,omitempty"`
	// Log: the server's own log (log.go).
	Log Log `yaml:"log"`
	// Paths: normalize_path, merge_slashes, escaped_slashes (paths.go).
	Paths `yaml:",inline"`
	// Dynamic: configuration from a control plane (dynamic.go); nil: none.
	Dynamic *Dynamic `yaml:"dynamic,omitempty"`
}

// Limits mirrors server.Limits.
type Limits struct {
	MaxHeaderBytes int   `yaml:"max_header_bytes"`
	MaxHeaders     int   `yaml:"max_headers"`
	MaxBodyBytes   int64 `yaml:"max_body_bytes"`
	MaxConns       int   `yaml:"max_conns"`
	// MaxConnsPerIP caps one client address's connections (an IPv6
	// client is its /64); zero means server.DefaultMaxConnsPerIP of
	// MaxConns: a tenth, at least min(MaxConns, 100).
	MaxConnsPerIP int `yaml:"max_conns_per_ip"`
}

// Timeouts mirrors server.Timeouts.
type Timeouts struct {
	ReadHeader Duration `yaml:"read_header"`
	Idle       Duration `yaml:"idle"`
	Write      Duration `yaml:"write"`
	Drain      Duration `yaml:"drain"`
	// DrainDelay: after SIGTERM, go on accepting and serving this long,
	// with the admin /ready answering 503 and clients told to go
	// (server.StartDrain), before the listeners close and the drain
	// starts; Envoy's drain time, Kubernetes' preStop sleep. Default 0:
	// the drain starts at once.
	DrainDelay Duration `yaml:"drain_delay"`
	// BodyMinRate (bytes per second) and BodyRateWindow: a request body
	// may take the window plus a second per BodyMinRate bytes received
	// (server.Timeouts; defaults 1024 B/s and 10s).
	BodyMinRate    int64    `yaml:"body_min_rate"`
	BodyRateWindow Duration `yaml:"body_rate_window"`
	// TunnelIdle ends a tunnel after a 101 (WebSocket) without a byte
	// either way (server.DefaultTunnelIdleTimeout, 1h).
	TunnelIdle Duration `yaml:"tunnel_idle"`
}

// Route is a match and one action.
type Route struct {
	Name    string   `yaml:"name,omitempty"`
	Match   Match    `yaml:"match"`
	Respond *Respond `yaml:"respond,omitempty"`
	Echo    *Echo    `yaml:"echo,omitempty"`
	Handler string   `yaml:"handler,omitempty"`
	Proxy   *Proxy   `yaml:"proxy,omitempty"`
	// NormalizePath false forwards the path as the client sent it; the
	// route was still matched on the normalised path (router.Route's
	// PathAsSent).
	NormalizePath *bool `yaml:"normalize_path,omitempty"`
	// HSTS: see hsts.go.
	HSTS *HSTS `yaml:"hsts,omitempty"`
	// Gatekeeping: see access.go.
	Allow       []string     `yaml:"allow,omitempty,flow"`
	Deny        []string     `yaml:"deny,omitempty,flow"`
	RateLimit   *RateLimit   `yaml:"rate_limit,omitempty"`
	BasicAuth   *BasicAuth   `yaml:"basic_auth,omitempty"`
	ForwardAuth *ForwardAuth `yaml:"forward_auth,omitempty"`
	// Rewrite, RequestHeaders, ResponseHeaders, Redirect: see rewrite.go.
	Rewrite         *Rewrite    `yaml:"rewrite,omitempty"`
	RequestHeaders  *HeaderEdit `yaml:"request_headers,omitempty"`
	ResponseHeaders *HeaderEdit `yaml:"response_headers,omitempty"`
	Redirect        *Redirect   `yaml:"redirect,omitempty"`
	// Files: see files.go; Compress: see compress.go.
	Files    *Files    `yaml:"files,omitempty"`
	Compress *Compress `yaml:"compress,omitempty"`
	line     int
	keyLine  map[string]int
}

// Match mirrors router.Match.
type Match struct {
	Host       string   `yaml:"host,omitempty"`
	Path       string   `yaml:"path,omitempty"`
	PathPrefix string   `yaml:"path_prefix,omitempty"`
	Methods    []string `yaml:"methods,omitempty,flow"`
	// PathRegex, Headers, Query: see rewrite.go.
	PathRegex string        `yaml:"path_regex,omitempty"`
	Headers   HeaderMatches `yaml:"headers,omitempty"`
	Query     QueryMatches  `yaml:"query,omitempty"`
	re        *regexp.Regexp
}

// Respond is a fixed response.
type Respond struct {
	Status  int               `yaml:"status"`
	Body    string            `yaml:"body,omitempty"`
	Headers map[string]string `yaml:"headers,omitempty"`
}

// Echo answers with JSON describing the request; it has no options yet.
type Echo struct{}

// Proxy forwards to a named upstream.
type Proxy struct {
	Upstream string `yaml:"upstream"`
	// Upgrades: see upgrade.go.
	Upgrades []string `yaml:"upgrades,omitempty,flow"`
}

// Duration is a time.Duration written as "10s", "1m30s".
type Duration time.Duration

// MarshalYAML writes d as a Go duration string.
func (d Duration) MarshalYAML() (any, error) { return time.Duration(d).String(), nil }

// Error is a configuration error at a line and key.
type Error struct {
	Line int // 1-based; 0 when the error has no position
	// Key is a dotted path: "routes[2].proxy.upstream"; "yaml" for a
	// syntax error, "(document)" for the document as a whole.
	Key string
	Msg string
}

func (e *Error) Error() string {
	key := printableKey(e.Key)
	if e.Line > 0 {
		return fmt.Sprintf("config: line %d: %s: %s", e.Line, key, e.Msg)
	}
	return fmt.Sprintf("config: %s: %s", key, e.Msg)
}

// Load reads and validates the file at path.
func Load(path string) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(b)
}

// Parse decodes and validates a YAML configuration. It reports every
// mistake it finds (errors.Join of *Error), not only the first, and one
// error for each: errors that follow from another are dropped (errors.go).
func Parse(b []byte) (*Config, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(b, &root); err != nil {
		return nil, syntaxError(b, err)
	}
	d := &decoder{}
	c := &Config{}
	if root.Kind == 0 || len(root.Content) == 0 {
		return nil, &Error{Key: "(document)", Msg: "empty configuration"}
	}
	d.config(root.Content[0], c)
	c.validate(d)
	if len(d.errs) > 0 {
		return nil, errors.Join(d.errs...)
	}
	return c, nil
}

type decoder struct {
	errs []error
	keys errorKeys // errors.go
}

// fail reports an error at n's line, unless it follows from one already
// reported (errors.go).
func (d *decoder) fail(n *yaml.Node, key, msg string) {
	if d.consequence(key) {
		return
	}
	line := 0
	if n != nil {
		line = n.Line
	}
	d.errs = append(d.errs, &Error{Line: line, Key: key, Msg: msg})
	d.keys.record(key)
}

// fields walks a mapping node, calling set for each known key and
// reporting unknown and duplicate keys.
func (d *decoder) fields(n *yaml.Node, path string, known map[string]func(v *yaml.Node, key string)) {
	// Marked read even when it is no mapping: the checks of its keys
	// would all judge values that were never read.
	defer d.markRead(path)
	if n.Kind != yaml.MappingNode {
		d.fail(n, cmp.Or(path, "(document)"), "must be a mapping")
		return
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		key := join(path, k.Value)
		set, ok := known[k.Value]
		switch {
		case !ok:
			if key := join(path, keyText(k.Value)); !d.consequence(key) { // else spare the suggestion's cost
				d.fail(k, key, unknownKey(k.Value, known))
			}
		case seen[k.Value]:
			d.fail(k, key, "duplicate key")
		default:
			seen[k.Value] = true
			set(v, key)
		}
	}
	reportKeys(path, known) // keys.go
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func (d *decoder) str(dst *string) func(*yaml.Node, string) {
	return func(v *yaml.Node, key string) {
		if v.Kind != yaml.ScalarNode || v.Tag == "!!null" {
			d.fail(v, key, "must be a string")
			return
		}
		*dst = v.Value
	}
}

func (d *decoder) integer(dst *int64) func(*yaml.Node, string) {
	return func(v *yaml.Node, key string) {
		n, err := strconv.ParseInt(v.Value, 10, 64)
		if v.Kind != yaml.ScalarNode || err != nil {
			d.fail(v, key, "must be an integer")
			return
		}
		if n < 0 {
			d.fail(v, key, "must not be negative")
			return
		}
		*dst = n
	}
}

func (d *decoder) boolean(dst **bool) func(*yaml.Node, string) {
	return func(v *yaml.Node, key string) {
		var b bool
		if v.Kind != yaml.ScalarNode || v.Tag != "!!bool" || v.Decode(&b) != nil {
			d.fail(v, key, "must be true or false")
			return
		}
		*dst = &b
	}
}

// boundedInt decodes an integer into dst that must lie in [lo, hi]
// (the http2: and http3: limits).
func (d *decoder) boundedInt(dst *int, lo, hi int) func(*yaml.Node, string) {
	return func(v *yaml.Node, key string) {
		d.intField(dst)(v, key)
		if *dst < lo || *dst > hi {
			d.fail(v, key, fmt.Sprintf("must be %d-%d", lo, hi))
		}
	}
}

func (d *decoder) intField(dst *int) func(*yaml.Node, string) {
	return func(v *yaml.Node, key string) {
		var n int64
		d.integer(&n)(v, key)
		*dst = int(n)
	}
}

func (d *decoder) duration(dst *Duration) func(*yaml.Node, string) {
	return func(v *yaml.Node, key string) {
		t, err := time.ParseDuration(v.Value)
		if v.Kind != yaml.ScalarNode || err != nil {
			d.fail(v, key, `must be a duration such as "10s" or "1m30s"`)
			return
		}
		if t <= 0 {
			d.fail(v, key, "must be positive")
			return
		}
		*dst = Duration(t)
	}
}

func (d *decoder) strings(dst *[]string) func(*yaml.Node, string) {
	return func(v *yaml.Node, key string) {
		if v.Kind != yaml.SequenceNode {
			d.fail(v, key, "must be a list")
			return
		}
		for i, e := range v.Content {
			var s string
			d.str(&s)(e, fmt.Sprintf("%s[%d]", key, i))
			*dst = append(*dst, s)
		}
	}
}

func (d *decoder) config(n *yaml.Node, c *Config) {
	fields := map[string]func(*yaml.Node, string){
		"listen": d.str(&c.Listen),
		"engine": func(v *yaml.Node, key string) {
			d.str(&c.Engine)(v, key)
			if c.Engine != "" && !validEngine(c.Engine) {
				d.fail(v, key, `must be "loop" or "goroutine"`)
			}
		},
		"proxy_on_loop": func(v *yaml.Node, key string) {
			d.boolean(&c.ProxyOnLoop)(v, key)
			c.proxyLine = v.Line
		},
		"listeners": func(v *yaml.Node, key string) {
			d.listeners(v, key, c)
		},
		"limits": func(v *yaml.Node, key string) {
			d.fields(v, key, map[string]func(*yaml.Node, string){
				"max_header_bytes": d.intField(&c.Limits.MaxHeaderBytes),
				"max_headers":      d.intField(&c.Limits.MaxHeaders),
				"max_body_bytes":   d.integer(&c.Limits.MaxBodyBytes),
				"max_conns":        d.intField(&c.Limits.MaxConns),
				"max_conns_per_ip": d.intField(&c.Limits.MaxConnsPerIP),
			})
		},
		"timeouts": func(v *yaml.Node, key string) {
			d.fields(v, key, map[string]func(*yaml.Node, string){
				"read_header": d.duration(&c.Timeouts.ReadHeader),
				"idle":        d.duration(&c.Timeouts.Idle),
				"write":       d.duration(&c.Timeouts.Write),
				"drain":       d.duration(&c.Timeouts.Drain),
				"drain_delay": d.durationOrZero(&c.Timeouts.DrainDelay),

				"body_min_rate":    d.integer(&c.Timeouts.BodyMinRate),
				"body_rate_window": d.duration(&c.Timeouts.BodyRateWindow),
				"tunnel_idle":      d.duration(&c.Timeouts.TunnelIdle),
			})
		},
		"upstreams": func(v *yaml.Node, key string) {
			if v.Kind != yaml.SequenceNode {
				d.fail(v, key, "must be a list")
				return
			}
			for i, e := range v.Content {
				u := Upstream{line: e.Line}
				d.upstream(e, fmt.Sprintf("%s[%d]", key, i), &u)
				c.Upstreams = append(c.Upstreams, u)
			}
		},
		"admin":                func(v *yaml.Node, key string) { d.admin(v, key, c) },
		"dynamic":              func(v *yaml.Node, key string) { d.dynamic(v, key, c) },
		"trusted_proxies":      d.cidrs(&c.TrustedProxies),
		"untrusted_forwarding": d.untrustedForwarding(&c.UntrustedForwarding),
		"http2":                d.http2(&c.HTTP2),
		"http3":                d.http3(&c.HTTP3),
		"access_log":           func(v *yaml.Node, key string) { d.accessLog(v, key, c) },
		"request_id":           func(v *yaml.Node, key string) { d.requestID(v, key, c) },
		"trace":                func(v *yaml.Node, key string) { d.trace(v, key, c) },
		"log":                  func(v *yaml.Node, key string) { d.log(v, key, &c.Log) },
		"routes": func(v *yaml.Node, key string) {
			if v.Kind != yaml.SequenceNode {
				d.fail(v, key, "must be a list")
				return
			}
			for i, e := range v.Content {
				r := Route{line: e.Line, keyLine: map[string]int{}}
				d.route(e, fmt.Sprintf("%s[%d]", key, i), &r)
				c.Routes = append(c.Routes, r)
			}
		},
	}
	d.pathKeys(&c.Paths, fields)
	d.fields(n, "", fields)
}

func (d *decoder) route(n *yaml.Node, path string, r *Route) {
	mark := func(name string, set func(*yaml.Node, string)) func(*yaml.Node, string) {
		return func(v *yaml.Node, key string) {
			r.keyLine[name] = v.Line
			set(v, key)
		}
	}
	d.fields(n, path, map[string]func(*yaml.Node, string){
		"name": d.str(&r.Name),
		"match": mark("match", func(v *yaml.Node, key string) {
			known := d.matchHeaders(&r.Match, &r.Match.re) // path_regex, headers, query
			known["host"], known["path"] = d.str(&r.Match.Host), d.str(&r.Match.Path)
			known["path_prefix"], known["methods"] = d.str(&r.Match.PathPrefix), d.strings(&r.Match.Methods)
			d.fields(v, key, known)
		}),
		"respond": mark("respond", func(v *yaml.Node, key string) {
			r.Respond = &Respond{}
			var status int64
			d.fields(v, key, map[string]func(*yaml.Node, string){
				"status": func(v *yaml.Node, key string) {
					r.keyLine["respond.status"] = v.Line
					d.integer(&status)(v, key)
				},
				"body": d.str(&r.Respond.Body),
				"headers": func(v *yaml.Node, key string) {
					if v.Kind != yaml.MappingNode {
						d.fail(v, key, "must be a mapping")
						return
					}
					r.Respond.Headers = map[string]string{}
					for i := 0; i+1 < len(v.Content); i += 2 {
						var s string
						d.str(&s)(v.Content[i+1], join(key, v.Content[i].Value))
						r.Respond.Headers[v.Content[i].Value] = s
					}
				},
			})
			r.Respond.Status = int(status)
		}),
		"echo": mark("echo", func(v *yaml.Node, key string) {
			r.Echo = &Echo{}
			d.fields(v, key, nil)
		}),
		"handler":      mark("handler", d.str(&r.Handler)),
		"hsts":         d.hsts(&r.HSTS),
		"allow":        d.cidrs(&r.Allow),
		"deny":         d.cidrs(&r.Deny),
		"rate_limit":   d.rateLimit(&r.RateLimit),
		"basic_auth":   d.basicAuth(&r.BasicAuth),
		"forward_auth": d.forwardAuth(&r.ForwardAuth),

		"normalize_path": d.boolean(&r.NormalizePath), // paths.go

		"rewrite":          mark("rewrite", d.rewrite(&r.Rewrite)),
		"request_headers":  mark("request_headers", d.headerEdit(&r.RequestHeaders, rewrite.RequestSide)),
		"response_headers": mark("response_headers", d.headerEdit(&r.ResponseHeaders, rewrite.ResponseSide)),
		"redirect":         mark("redirect", d.redirect(&r.Redirect, r.keyLine)),
		"files":            d.files(&r.Files, func(k string, l int) { r.keyLine[k] = l }),
		"compress":         d.compress(&r.Compress),
		"proxy": mark("proxy", func(v *yaml.Node, key string) {
			r.Proxy = &Proxy{}
			d.fields(v, key, map[string]func(*yaml.Node, string){
				"upstream": func(v *yaml.Node, key string) {
					r.keyLine["proxy.upstream"] = v.Line
					d.str(&r.Proxy.Upstream)(v, key)
				},
				"upgrades": d.upgrades(&r.Proxy.Upgrades),
			})
		}),
	})
}

// validate checks what the decoder cannot: references, ranges, exclusive
// actions.
func (c *Config) validate(d *decoder) {
	c.validateAdmin(d)
	if c.ProxyOnLoop != nil && *c.ProxyOnLoop {
		loop := false
		for _, l := range c.EffectiveListeners() {
			loop = loop || l.Transport == TransportTCP && l.Engine == EngineLoop
		}
		if !loop {
			d.fail(&yaml.Node{Line: c.proxyLine}, "proxy_on_loop", "needs a tcp listener on engine: loop")
		}
	}
	names := c.validateUpstreams(d)
	// An upstream whose name did not read may be the one a route names.
	namesKnown := !d.failedWithin("upstreams") || !slices.ContainsFunc(c.Upstreams, func(u Upstream) bool { return u.Name == "" })
	for i, r := range c.Routes {
		key := fmt.Sprintf("routes[%d]", i)
		at := &yaml.Node{Line: r.line}
		line := func(k string) *yaml.Node {
			if l, ok := r.keyLine[k]; ok {
				return &yaml.Node{Line: l}
			}
			return at
		}
		actions := 0
		for _, set := range []bool{r.Respond != nil, r.Echo != nil, r.Handler != "", r.Proxy != nil, r.Redirect != nil, r.Files != nil} {
			if set {
				actions++
			}
		}
		if actions != 1 {
			d.fail(at, key, "needs exactly one action: respond, echo, handler, proxy, redirect or files")
		}
		r.validateRewrite(d, key, line)
		c.validateForwarding(d, key, &r, line("request_headers"))
		m := r.Match
		if m.Path != "" && m.PathPrefix != "" {
			d.fail(line("match"), key+".match", "path and path_prefix are exclusive")
		}
		if m.Path != "" && m.Path[0] != '/' || m.PathPrefix != "" && m.PathPrefix[0] != '/' {
			d.fail(line("match"), key+".match", "paths must start with '/'")
		}
		if h := m.Host; h != "" && (strings.ContainsAny(h, "/ ") || strings.Contains(h[min(len(h), 1):], "*") || h[0] == '*' && !strings.HasPrefix(h, "*.")) {
			d.fail(line("match"), key+".match.host", `must be a host name or "*.suffix"`)
		}
		if r.Respond != nil && (r.Respond.Status < 200 || r.Respond.Status > 999) {
			d.fail(line("respond.status"), key+".respond.status", "must be 200-999")
		}
		if r.Proxy != nil && !names[r.Proxy.Upstream] && namesKnown {
			d.fail(line("proxy.upstream"), key+".proxy.upstream", "names no upstream")
		}
	}
	c.validateListeners(d)
	if len(c.Routes) == 0 && c.XDS() == nil { // routes may all come from xDS
		d.fail(nil, "routes", "at least one route is needed")
	}
}

// validTarget accepts "host:port" (kernel TCP) and "scheme://host:port"
// with optional query options ("rdma://127.0.0.1:7471?provider=tcp"); Build
// resolves schemes through BuildOptions and rejects unknown ones.
func validTarget(t string) bool { return targetProblem(t) == "" }

// targetProblem is what is wrong with target t ("" if nothing): a port out
// of range, or else the form.
func targetProblem(t string) string {
	if strings.HasPrefix(t, discover.SRVScheme) {
		return srvTargetProblem(t)
	}
	hostPort := t
	if strings.Contains(t, "://") {
		u, err := url.Parse(t)
		if err != nil || u.Scheme == "" || u.User != nil || u.Path != "" || u.Fragment != "" {
			return targetForm
		}
		hostPort = u.Host
	}
	if _, _, err := splitHostPort(hostPort); err != nil {
		if i := strings.LastIndexByte(hostPort, ':'); i > 0 {
			if msg := portRangeProblem(hostPort[i+1:], minTargetPort); msg != "" {
				return msg
			}
		}
		return targetForm
	}
	return ""
}

// targetForm is the message for a target of the wrong form.
const targetForm = `must be "host:port" or "scheme://host:port[?options]"`

func splitHostPort(s string) (string, string, error) {
	i := strings.LastIndexByte(s, ':')
	if i <= 0 {
		return "", "", errors.New("no port")
	}
	p, err := strconv.Atoi(s[i+1:])
	if err != nil || p <= 0 || p > 65535 {
		return "", "", errors.New("bad port")
	}
	return s[:i], s[i+1:], nil
}
