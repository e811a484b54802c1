package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/simdedge/simdedge/server/upstream"
	"go.yaml.in/yaml/v3"
)

// Upstream is a named pool of targets and the policies that choose among
// them (server/upstream). Every key has a default (WithDefaults), printed
// by `simdedge check`:
//
//	upstreams:
//	  - name: api
//	    targets:
//	      - "127.0.0.1:9001"                     # weight 1
//	      - {address: "127.0.0.1:9002", weight: 3}
//	    balance: round_robin   # least_conn, p2c, random, hash
//	    hash: {key: "header:X-User"}   # only with balance: hash
//	    health:
//	      active:  {path: /healthz, interval: 5s, timeout: 1s, healthy_after: 2, unhealthy_after: 3, expect: "200-399"}
//	      passive: {consecutive_failures: 5, eject_for: 30s, max_ejected: 50%}
//	    retries: {attempts: 1, on: [connect_failure, reset, 502, 503, 504], budget: 20%, backoff: 25ms}
//	    timeouts: {connect: 2s, response_header: 30s, try: 30s, total: 60s}
//	    max_conns_per_target: 0   # 0: no cap
//	    queue: {size: 1024, timeout: 1s}
//	    tls: {ca: backend-ca.pem, server_name: backend.internal}   # optional, see UpstreamTLS
//
// Active checks run only when health.active is given.
// consecutive_failures: 0 turns passive ejection off, attempts: 0 turns
// retries off (connect failures still fail over), max_ejected: 0% ejects
// nothing, queue.size: 0 answers 503 at once when every target is at its
// cap.
type Upstream struct {
	Name    string   `yaml:"name"`
	Targets []Target `yaml:"targets,omitempty"`
	Builtin string   `yaml:"builtin,omitempty"`
	// Balance is the selection policy (upstream.Balance).
	Balance           string           `yaml:"balance,omitempty"`
	Hash              *Hash            `yaml:"hash,omitempty"`
	Health            Health           `yaml:"health"`
	Retries           Retries          `yaml:"retries"`
	Timeouts          UpstreamTimeouts `yaml:"timeouts"`
	MaxConnsPerTarget int              `yaml:"max_conns_per_target"`
	Queue             Queue            `yaml:"queue"`
	// TLS: see UpstreamTLS (upstream_tls.go).
	TLS *UpstreamTLS `yaml:"tls,omitempty"`
	// SendProxyProtocol: see access.go.
	SendProxyProtocol string `yaml:"send_proxy_protocol,omitempty"`
	// Resolve: service discovery (discover.go).
	Resolve *Resolve `yaml:"resolve,omitempty"`
	line    int
	// builtinLine is the line of the builtin key, for Build's errors.
	builtinLine int
	// keyLine holds the lines of keys that cross-field checks report.
	keyLine map[string]int
}

// Target is one upstream target: "host:port" (or a scheme URL), with a
// relative weight (1 when absent). YAML accepts the plain string or
// {address, weight}.
type Target struct {
	Address string `yaml:"address"`
	Weight  int    `yaml:"weight,omitempty"`
	line    int
}

// MarshalYAML writes a weight-1 target as its plain address.
func (t Target) MarshalYAML() (any, error) {
	if t.Weight <= 1 {
		return t.Address, nil
	}
	return struct {
		Address string `yaml:"address"`
		Weight  int    `yaml:"weight"`
	}{t.Address, t.Weight}, nil
}

// Hash configures balance: hash.
type Hash struct {
	// Key is header:NAME, cookie:NAME, query:NAME, client_ip or path.
	Key string `yaml:"key"`
}

// Health configures active and passive health.
type Health struct {
	Active  *ActiveHealth `yaml:"active,omitempty"`
	Passive Passive       `yaml:"passive"`
}

// ActiveHealth configures active checks (upstream.ActiveOptions).
type ActiveHealth struct {
	Path           string   `yaml:"path"`
	Interval       Duration `yaml:"interval"`
	Timeout        Duration `yaml:"timeout"`
	HealthyAfter   int      `yaml:"healthy_after"`
	UnhealthyAfter int      `yaml:"unhealthy_after"`
	// Expect are the passing statuses: "200-399", "200,204".
	Expect string `yaml:"expect"`
}

// Passive configures outlier ejection (upstream.PassiveOptions).
type Passive struct {
	// ConsecutiveFailures: nil means the default, 0 turns ejection off.
	ConsecutiveFailures *int     `yaml:"consecutive_failures"`
	EjectFor            Duration `yaml:"eject_for"`
	// MaxEjected: nil means the default.
	MaxEjected *Percent `yaml:"max_ejected"`
}

// Retries configures the retry policy (upstream.RetryPolicy).
type Retries struct {
	// Attempts are retries after the first try; nil means the default,
	// 0 none.
	Attempts *int     `yaml:"attempts"`
	On       []string `yaml:"on,flow"`
	Budget   *Percent `yaml:"budget"`
	Backoff  Duration `yaml:"backoff"`
}

// UpstreamTimeouts bound an exchange: connecting, the response head after
// the request is sent, one attempt up to its head, and the request over
// all attempts up to its head.
type UpstreamTimeouts struct {
	Connect        Duration `yaml:"connect"`
	ResponseHeader Duration `yaml:"response_header"`
	Try            Duration `yaml:"try"`
	Total          Duration `yaml:"total"`
}

// Queue bounds the requests waiting for a target under
// max_conns_per_target.
type Queue struct {
	// Size: nil means the default, 0 no waiting.
	Size    *int     `yaml:"size"`
	Timeout Duration `yaml:"timeout"`
}

// Percent is a share written "50%" (or 50), 0-100.
type Percent int

// MarshalYAML writes p as "N%".
func (p Percent) MarshalYAML() (any, error) { return strconv.Itoa(int(p)) + "%", nil }

// Balance policies an upstream may name.
var balances = []upstream.Balance{upstream.RoundRobin, upstream.LeastConn, upstream.P2C, upstream.Random, upstream.Hash}

func (d *decoder) upstream(n *yaml.Node, path string, u *Upstream) {
	u.keyLine = map[string]int{}
	mark := func(name string, set func(*yaml.Node, string)) func(*yaml.Node, string) {
		return func(v *yaml.Node, key string) {
			u.keyLine[name] = v.Line
			set(v, key)
		}
	}
	d.fields(n, path, map[string]func(*yaml.Node, string){
		"name":    d.str(&u.Name),
		"targets": mark("targets", d.targets(&u.Targets)),
		"builtin": func(v *yaml.Node, key string) {
			u.builtinLine = v.Line
			d.str(&u.Builtin)(v, key)
		},
		"balance": mark("balance", func(v *yaml.Node, key string) {
			d.str(&u.Balance)(v, key)
			for _, b := range balances {
				if u.Balance == string(b) {
					return
				}
			}
			if u.Balance != "" {
				d.fail(v, key, "must be round_robin, least_conn, p2c, random or hash")
			}
		}),
		"hash": mark("hash", func(v *yaml.Node, key string) {
			u.Hash = &Hash{}
			d.fields(v, key, map[string]func(*yaml.Node, string){
				"key": func(v *yaml.Node, key string) {
					d.str(&u.Hash.Key)(v, key)
					if _, err := upstream.ParseHashKey(u.Hash.Key); err != nil && u.Hash.Key != "" {
						d.fail(v, key, `must be "header:NAME", "cookie:NAME", "query:NAME", "client_ip" or "path"`)
					}
				},
			})
		}),
		"health": func(v *yaml.Node, key string) {
			d.fields(v, key, map[string]func(*yaml.Node, string){
				"active": mark("health.active", func(v *yaml.Node, key string) {
					a := &ActiveHealth{}
					u.Health.Active = a
					d.fields(v, key, map[string]func(*yaml.Node, string){
						"path": func(v *yaml.Node, key string) {
							d.str(&a.Path)(v, key)
							if a.Path != "" && (a.Path[0] != '/' || strings.ContainsAny(a.Path, " \t\r\n#")) {
								d.fail(v, key, `must be an origin-form path such as "/healthz"`)
							}
						},
						"interval":        mark("health.active.interval", d.duration(&a.Interval)),
						"timeout":         mark("health.active.timeout", d.duration(&a.Timeout)),
						"healthy_after":   d.positive(&a.HealthyAfter),
						"unhealthy_after": d.positive(&a.UnhealthyAfter),
						"expect": func(v *yaml.Node, key string) {
							d.str(&a.Expect)(v, key)
							if _, err := upstream.ParseStatusSet(a.Expect); err != nil && a.Expect != "" {
								d.fail(v, key, `must be status codes or ranges of 100-599 ("200-399", "200,204")`)
							}
						},
					})
				}),
				"passive": func(v *yaml.Node, key string) {
					p := &u.Health.Passive
					d.fields(v, key, map[string]func(*yaml.Node, string){
						"consecutive_failures": d.optInt(&p.ConsecutiveFailures),
						"eject_for":            d.duration(&p.EjectFor),
						"max_ejected":          d.percent(&p.MaxEjected),
					})
				},
			})
		},
		"retries": func(v *yaml.Node, key string) {
			r := &u.Retries
			d.fields(v, key, map[string]func(*yaml.Node, string){
				"attempts": d.optInt(&r.Attempts),
				"on": func(v *yaml.Node, key string) {
					d.strings(&r.On)(v, key)
					for i, c := range r.On {
						if _, err := upstream.ParseRetryOn([]string{c}); err != nil {
							d.fail(v.Content[i], fmt.Sprintf("%s[%d]", key, i), "must be connect_failure, reset, timeout, 5xx or a status 500-599")
						}
					}
					if r.On == nil {
						r.On = []string{}
					}
				},
				"budget":  d.percent(&r.Budget),
				"backoff": d.duration(&r.Backoff),
			})
		},
		"timeouts": func(v *yaml.Node, key string) {
			t := &u.Timeouts
			d.fields(v, key, map[string]func(*yaml.Node, string){
				"connect":         d.duration(&t.Connect),
				"response_header": d.duration(&t.ResponseHeader),
				"try":             mark("timeouts.try", d.duration(&t.Try)),
				"total":           mark("timeouts.total", d.duration(&t.Total)),
			})
		},
		"max_conns_per_target": d.intField(&u.MaxConnsPerTarget),
		"tls":                  d.upstreamTLS(&u.TLS),
		"send_proxy_protocol":  mark("send_proxy_protocol", d.sendProxy(&u.SendProxyProtocol)),
		"resolve":              d.resolve(&u.Resolve),
		"queue": func(v *yaml.Node, key string) {
			d.fields(v, key, map[string]func(*yaml.Node, string){
				"size":    d.optInt(&u.Queue.Size),
				"timeout": d.duration(&u.Queue.Timeout),
			})
		},
	})
}

// targets decodes a list of "addr" or {address, weight}.
func (d *decoder) targets(dst *[]Target) func(*yaml.Node, string) {
	return func(v *yaml.Node, key string) {
		if v.Kind != yaml.SequenceNode {
			d.fail(v, key, "must be a list")
			return
		}
		for i, e := range v.Content {
			t := Target{line: e.Line}
			path := fmt.Sprintf("%s[%d]", key, i)
			if e.Kind == yaml.MappingNode {
				d.fields(e, path, map[string]func(*yaml.Node, string){
					"address": d.str(&t.Address),
					"weight": func(v *yaml.Node, key string) {
						d.intField(&t.Weight)(v, key)
						if t.Weight < 1 || t.Weight > upstream.MaxWeight {
							d.fail(v, key, fmt.Sprintf("must be 1-%d", upstream.MaxWeight))
						}
					},
				})
			} else {
				d.str(&t.Address)(e, path)
			}
			// The address is judged as it is read, beside the upstream's
			// other values: validateUpstreams' errors are dropped for an
			// upstream read with a mistake (errors.go).
			if msg := targetProblem(t.Address); msg != "" && t.Address != "" {
				d.fail(e, path, msg)
			}
			*dst = append(*dst, t)
		}
	}
}

// optInt decodes a non-negative integer whose zero is meaningful (nil
// stays the default).
func (d *decoder) optInt(dst **int) func(*yaml.Node, string) {
	return func(v *yaml.Node, key string) {
		var n int64 = -1
		d.integer(&n)(v, key)
		if n >= 0 {
			i := int(n)
			*dst = &i
		}
	}
}

// positive decodes an integer of at least 1.
func (d *decoder) positive(dst *int) func(*yaml.Node, string) {
	return func(v *yaml.Node, key string) {
		n := int64(1)
		d.integer(&n)(v, key)
		if n < 1 {
			d.fail(v, key, "must be at least 1")
		}
		*dst = int(n)
	}
}

// percent decodes "N%" or N, 0-100.
func (d *decoder) percent(dst **Percent) func(*yaml.Node, string) {
	return func(v *yaml.Node, key string) {
		s := strings.TrimSuffix(v.Value, "%")
		n, err := strconv.Atoi(s)
		if v.Kind != yaml.ScalarNode || err != nil || n < 0 || n > 100 || s != strings.TrimSpace(s) {
			d.fail(v, key, `must be a percentage 0-100 such as "50%"`)
			return
		}
		p := Percent(n)
		*dst = &p
	}
}

// validateUpstreams checks the upstreams and returns their names.
func (c *Config) validateUpstreams(d *decoder) map[string]bool {
	names := map[string]bool{}
	for i, u := range c.Upstreams {
		key := fmt.Sprintf("upstreams[%d]", i)
		at := &yaml.Node{Line: u.line}
		line := func(k string) *yaml.Node {
			if l, ok := u.keyLine[k]; ok {
				return &yaml.Node{Line: l}
			}
			return at
		}
		switch {
		case u.Name == "":
			d.fail(at, key+".name", "missing")
		case names[u.Name]:
			d.fail(at, key+".name", "duplicate upstream name")
		}
		names[u.Name] = true
		if (len(u.Targets) == 0) == (u.Builtin == "") {
			d.fail(at, key, "needs either targets or builtin")
		}
		bad := false
		seen := map[string]bool{}
		for j, t := range u.Targets {
			tk := fmt.Sprintf("%s.targets[%d]", key, j)
			switch {
			case targetProblem(t.Address) != "":
				d.fail(&yaml.Node{Line: t.line}, tk, targetProblem(t.Address))
				bad = true
			case seen[t.Address]:
				d.fail(&yaml.Node{Line: t.line}, tk, "duplicate target")
				bad = true
			}
			seen[t.Address] = true
		}
		if len(u.Targets) > upstream.MaxTargets {
			d.fail(line("targets"), key+".targets", fmt.Sprintf("more than %d targets", upstream.MaxTargets))
			bad = true
		}
		d.validateUpstreamTLS(line("targets"), key, &u)
		if u.SendProxyProtocol != "" && (u.TLS != nil || u.Builtin != "" || hasURLTarget(u.Targets)) {
			d.fail(line("send_proxy_protocol"), key+".send_proxy_protocol", "only for plain host:port targets")
		}
		d.validateUpstreamH2(line("targets"), key, &u)
		d.validateResolve(at, key, &u)
		hashing := u.Balance == string(upstream.Hash)
		switch {
		case hashing && (u.Hash == nil || u.Hash.Key == ""):
			d.fail(line("balance"), key+".hash.key", "balance: hash needs hash.key")
		case !hashing && u.Hash != nil:
			d.fail(line("hash"), key+".hash", "only with balance: hash")
		}
		if a := u.Health.Active; a != nil && a.Timeout != 0 && a.Interval != 0 && a.Timeout > a.Interval {
			d.fail(line("health.active.timeout"), key+".health.active.timeout", "must not exceed the interval")
		}
		if t := u.Timeouts; t.Try != 0 && t.Total != 0 && t.Try > t.Total {
			d.fail(line("timeouts.try"), key+".timeouts.try", "must not exceed timeouts.total")
		}
		if !bad && len(u.Targets) > 0 && u.Resolve == nil && !hasSRVTarget(u.Targets) {
			// The pool's own checks (weight sum of the schedule).
			if _, err := upstream.New(u.withDefaults().PoolOptions(nil)); err != nil {
				d.fail(line("targets"), key+".targets", strings.TrimPrefix(err.Error(), "upstream: "))
			}
		}
	}
	return names
}

// withDefaults fills every upstream default.
func (u Upstream) withDefaults() Upstream {
	def := func(d *Duration, v time.Duration) {
		if *d == 0 {
			*d = Duration(v)
		}
	}
	intp := func(p **int, v int) {
		if *p == nil {
			*p = &v
		}
	}
	pct := func(p **Percent, v int) {
		if *p == nil {
			x := Percent(v)
			*p = &x
		}
	}
	u.Targets = append([]Target(nil), u.Targets...)
	if u.Balance == "" {
		u.Balance = string(upstream.DefaultBalance)
	}
	if u.Hash != nil {
		h := *u.Hash
		u.Hash = &h
	}
	if u.Health.Active != nil {
		a := *u.Health.Active
		if a.Path == "" {
			a.Path = "/"
		}
		def(&a.Interval, upstream.DefaultCheckInterval)
		def(&a.Timeout, min(upstream.DefaultCheckTimeout, time.Duration(a.Interval)))
		if a.HealthyAfter == 0 {
			a.HealthyAfter = upstream.DefaultHealthyAfter
		}
		if a.UnhealthyAfter == 0 {
			a.UnhealthyAfter = upstream.DefaultUnhealthyAfter
		}
		if a.Expect == "" {
			a.Expect = upstream.DefaultExpect
		}
		u.Health.Active = &a
	}
	p := &u.Health.Passive
	intp(&p.ConsecutiveFailures, upstream.DefaultConsecutiveFailures)
	def(&p.EjectFor, upstream.DefaultEjectFor)
	pct(&p.MaxEjected, upstream.DefaultMaxEjectedPercent)
	r := &u.Retries
	intp(&r.Attempts, upstream.DefaultRetryAttempts)
	if r.On == nil {
		r.On = strings.Split(upstream.DefaultRetryOn, ",")
	}
	pct(&r.Budget, upstream.DefaultBudgetPercent)
	def(&r.Backoff, upstream.DefaultBackoff)
	t := &u.Timeouts
	def(&t.Connect, upstream.DefaultConnectTimeout)
	def(&t.ResponseHeader, upstream.DefaultResponseHeaderTimeout)
	def(&t.Try, upstream.DefaultTryTimeout)
	def(&t.Total, upstream.DefaultTotalTimeout)
	intp(&u.Queue.Size, upstream.DefaultQueueSize)
	def(&u.Queue.Timeout, upstream.DefaultQueueTimeout)
	u.resolveDefaults()
	return u
}

// Addresses are the targets' addresses in order.
func (u *Upstream) Addresses() []string {
	a := make([]string, len(u.Targets))
	for i, t := range u.Targets {
		a[i] = t.Address
	}
	return a
}

// PoolOptions translates an upstream whose defaults are filled
// (WithDefaults) into the policy package's options. targets replace the
// configured ones when not nil (builtin upstreams). Values were validated
// by Parse.
func (u Upstream) PoolOptions(targets []string) upstream.Options {
	o := upstream.Options{
		Name:              u.Name,
		Balance:           upstream.Balance(u.Balance),
		MaxConnsPerTarget: u.MaxConnsPerTarget,
		QueueTimeout:      time.Duration(u.Queue.Timeout),
		Timeouts: upstream.Timeouts{
			Connect:        time.Duration(u.Timeouts.Connect),
			ResponseHeader: time.Duration(u.Timeouts.ResponseHeader),
			Try:            time.Duration(u.Timeouts.Try),
			Total:          time.Duration(u.Timeouts.Total),
		},
	}
	if targets != nil {
		for _, a := range targets {
			o.Targets = append(o.Targets, upstream.TargetSpec{Address: a})
		}
	} else {
		for _, t := range u.Targets {
			o.Targets = append(o.Targets, upstream.TargetSpec{Address: t.Address, Weight: t.Weight})
		}
	}
	if u.Hash != nil {
		o.HashKey, _ = upstream.ParseHashKey(u.Hash.Key)
	}
	if s := u.Queue.Size; s != nil {
		// The policy package reads 0 as its default: "no waiting" is a
		// negative size there.
		o.QueueSize = *s
		if *s == 0 {
			o.QueueSize = -1
		}
	}
	p := u.Health.Passive
	o.Passive.EjectFor = time.Duration(p.EjectFor)
	if p.ConsecutiveFailures != nil {
		o.Passive.ConsecutiveFailures = *p.ConsecutiveFailures
		o.Passive.Disabled = *p.ConsecutiveFailures == 0
	}
	if p.MaxEjected != nil {
		o.Passive.MaxEjectedPercent = int(*p.MaxEjected)
		if *p.MaxEjected == 0 {
			o.Passive.MaxEjectedPercent = upstream.NoEjection
		}
	}
	r := u.Retries
	o.Retry.Backoff = time.Duration(r.Backoff)
	if r.Attempts != nil {
		o.Retry.Attempts = *r.Attempts
		if *r.Attempts == 0 {
			o.Retry.Attempts = upstream.NoRetries
		}
	}
	switch {
	case r.On != nil && len(r.On) == 0:
		o.Retry.Attempts = upstream.NoRetries // "on: []": no condition retries
	case r.On != nil:
		o.Retry.On, _ = upstream.ParseRetryOn(r.On)
	}
	if r.Budget != nil {
		o.Retry.BudgetPercent = int(*r.Budget)
	}
	return o
}

// ActiveOptions are the upstream's active-check options, ok false when it
// has none.
func (u Upstream) ActiveOptions() (o upstream.ActiveOptions, ok bool) {
	a := u.Health.Active
	if a == nil {
		return o, false
	}
	o = upstream.ActiveOptions{
		Path:           a.Path,
		Interval:       time.Duration(a.Interval),
		Timeout:        time.Duration(a.Timeout),
		HealthyAfter:   a.HealthyAfter,
		UnhealthyAfter: a.UnhealthyAfter,
	}
	if a.Expect != "" {
		o.Expect, _ = upstream.ParseStatusSet(a.Expect)
	}
	return o, true
}
