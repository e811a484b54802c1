package config

import (
	"strconv"

	"go.yaml.in/yaml/v3"

	"github.com/simdedge/simdedge/internal/ascii"
	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/accesslog"
)

// Defaults of the observability keys (issue 22 phase 2).
const (
	// DefaultAccessLogPath and DefaultAccessLogFormat apply once
	// `access_log:` is present; without it there is no access log.
	DefaultAccessLogPath   = "stdout"
	DefaultAccessLogFormat = "json"
	// DefaultRequestIDHeader applies once `request_id:` is present;
	// without it requests get no IDs.
	DefaultRequestIDHeader = "X-Request-Id"
	// DefaultTracePropagate: traceparent is rewritten with the edge's span
	// unless turned off (a proxy that forwards it untouched hides itself
	// from the trace).
	DefaultTracePropagate = true
)

// AccessLog is `access_log:`: one line per request (server/accesslog).
type AccessLog struct {
	// Path is stdout, stderr or a file (appended to; reopened on
	// SIGUSR1 for logrotate).
	Path string `yaml:"path"`
	// Format is json or combined.
	Format string `yaml:"format"`
	// Sample is the share of requests logged, in (0, 1] (default 1).
	Sample float64 `yaml:"sample"`
}

// RequestID is `request_id:`: the field carrying request IDs, and whether
// one is generated for a request that brings none (or an invalid one).
type RequestID struct {
	Header   string `yaml:"header"`
	Generate *bool  `yaml:"generate"`
}

// Trace is `trace:`: W3C trace context on proxied requests.
type Trace struct {
	// Propagate forwards traceparent with the edge's own span ID and
	// tracestate with it, and drops an invalid traceparent (default
	// true).
	Propagate *bool `yaml:"propagate"`
	// Generate starts a trace (not sampled) for a proxied request that
	// brings no valid traceparent (default false).
	Generate *bool `yaml:"generate"`
}

func (d *decoder) accessLog(v *yaml.Node, key string, c *Config) {
	a := &AccessLog{}
	d.fields(v, key, map[string]func(*yaml.Node, string){
		"path": func(v *yaml.Node, k string) {
			d.str(&a.Path)(v, k)
			if v.Kind == yaml.ScalarNode && a.Path == "" {
				d.fail(v, k, "must not be empty (stdout, stderr or a file)")
			}
		},
		"format": func(v *yaml.Node, k string) {
			d.str(&a.Format)(v, k)
			if _, ok := accesslog.ParseFormat(a.Format); !ok && v.Kind == yaml.ScalarNode {
				d.fail(v, k, "must be json or combined")
			}
		},
		"sample": func(v *yaml.Node, k string) {
			f, err := strconv.ParseFloat(v.Value, 64)
			if v.Kind != yaml.ScalarNode || err != nil || !(f > 0 && f <= 1) {
				d.fail(v, k, "must be a number in (0, 1]")
				return
			}
			a.Sample = f
		},
	})
	c.AccessLog = a
}

func (d *decoder) requestID(v *yaml.Node, key string, c *Config) {
	r := &RequestID{}
	d.fields(v, key, map[string]func(*yaml.Node, string){
		"header": func(v *yaml.Node, k string) {
			d.str(&r.Header)(v, k)
			if v.Kind == yaml.ScalarNode && !ascii.IsToken(r.Header) {
				d.fail(v, k, "must be a field name (letters, digits, - and the like)")
			}
		},
		"generate": d.boolean(&r.Generate),
	})
	c.RequestID = r
}

func (d *decoder) trace(v *yaml.Node, key string, c *Config) {
	t := &Trace{}
	d.fields(v, key, map[string]func(*yaml.Node, string){
		"propagate": d.boolean(&t.Propagate),
		"generate":  d.boolean(&t.Generate),
	})
	c.Trace = t
}

func (a *AccessLog) withDefaults() *AccessLog {
	if a == nil {
		return nil
	}
	e := *a
	if e.Path == "" {
		e.Path = DefaultAccessLogPath
	}
	if e.Format == "" {
		e.Format = DefaultAccessLogFormat
	}
	if e.Sample == 0 {
		e.Sample = 1
	}
	return &e
}

func (r *RequestID) withDefaults() *RequestID {
	if r == nil {
		return nil
	}
	e := *r
	if e.Header == "" {
		e.Header = DefaultRequestIDHeader
	}
	if e.Generate == nil {
		t := true
		e.Generate = &t
	}
	return &e
}

func (t *Trace) withDefaults() *Trace {
	var e Trace
	if t != nil {
		e = *t
	}
	if e.Propagate == nil {
		v := DefaultTracePropagate
		e.Propagate = &v
	}
	if e.Generate == nil {
		f := false
		e.Generate = &f
	}
	return &e
}

// AccessLogOptions are the accesslog.Options of `access_log:`, and false
// when there is no access log. The program opens it (a file is a resource
// a reload must not reopen needlessly).
func (c *Config) AccessLogOptions() (accesslog.Options, bool) {
	a := c.AccessLog.withDefaults()
	if a == nil {
		return accesslog.Options{}, false
	}
	f, _ := accesslog.ParseFormat(a.Format)
	return accesslog.Options{Path: a.Path, Format: f, Sample: a.Sample}, true
}

// observeOptions fills the request-ID and trace options of o.
func (c *Config) observeOptions(o *server.Options) {
	if r := c.RequestID.withDefaults(); r != nil {
		o.RequestID = server.RequestIDOptions{Header: r.Header, Generate: *r.Generate}
	}
	t := c.Trace.withDefaults()
	o.Trace = server.TraceOptions{Propagate: *t.Propagate, Generate: *t.Generate}
}
