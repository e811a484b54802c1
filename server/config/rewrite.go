package config

import (
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"

	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/rewrite"
	"github.com/simdedge/simdedge/server/router"
	"go.yaml.in/yaml/v3"
)

// Matching and rewriting keys of a route (issue 23; router.Match,
// router.Policy, router.Redirect):
//
//	routes:
//	  - match:
//	      path_regex: "^/api/(v[0-9]+)/"       # RE2, unanchored; groups are {1}, {2}..
//	      headers: {X-Tenant: blue, X-Env: {prefix: prod}, X-Id: {regex: "^[0-9]+$"}, X-Beta: {present: true}}
//	      query: {debug: "1"}                  # form-decoded, any occurrence of a repeated key
//	    rewrite: {strip_prefix: /api}          # or replace_prefix: {from: /a/, to: /b/}, or regex: {match: RE, to: "/{1}"}
//	    request_headers:  {set: {X-Client: "{client_ip}"}, add: {X-Version: "{1}"}, remove: [X-Debug]}
//	    response_headers: {set: {}, add: {}, remove: [Server]}
//	    proxy: {upstream: api}
//	  - match: {path_prefix: /old/}
//	    redirect: {to: "https://{host}{uri}", status: 308}
//
// All of them are optional and have no defaults, except redirect.status
// (308, DefaultRedirectStatus). Regexes are compiled and templates parsed
// when the file is loaded; errors name the line and key.

// HeaderMatch is one entry of match.headers: NAME: VALUE (exact), or
// NAME: {exact: V} | {prefix: P} | {regex: RE} | {present: true|false}.
type HeaderMatch struct {
	Name    string
	Exact   string
	Prefix  string
	Regex   string
	Present *bool
	kind    router.HeaderMatchKind
	re      *regexp.Regexp
}

// HeaderMatches keeps match.headers in file order.
type HeaderMatches []HeaderMatch

// MarshalYAML writes the mapping as it is read.
func (hs HeaderMatches) MarshalYAML() (any, error) {
	n := &yaml.Node{Kind: yaml.MappingNode}
	for _, h := range hs {
		var v *yaml.Node
		switch h.kind {
		case router.HeaderExact:
			v = scalar(h.Exact)
		case router.HeaderPrefix:
			v = pair("prefix", scalar(h.Prefix))
		case router.HeaderRegex:
			v = pair("regex", scalar(h.Regex))
		default:
			v = pair("present", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: fmt.Sprint(h.kind == router.HeaderPresent)})
		}
		n.Content = append(n.Content, scalar(h.Name), v)
	}
	return n, nil
}

// QueryMatch is one entry of match.query: NAME: VALUE.
type QueryMatch struct{ Name, Value string }

// QueryMatches keeps match.query in file order.
type QueryMatches []QueryMatch

// MarshalYAML writes the mapping as it is read.
func (qs QueryMatches) MarshalYAML() (any, error) {
	n := &yaml.Node{Kind: yaml.MappingNode}
	for _, q := range qs {
		n.Content = append(n.Content, scalar(q.Name), scalar(q.Value))
	}
	return n, nil
}

// Rewrite is a route's path rewrite: exactly one of its keys.
type Rewrite struct {
	StripPrefix   string         `yaml:"strip_prefix,omitempty"`
	ReplacePrefix *PrefixReplace `yaml:"replace_prefix,omitempty"`
	Regex         *RegexRewrite  `yaml:"regex,omitempty"`
	built         *rewrite.PathRewrite
}

// PrefixReplace is rewrite.replace_prefix.
type PrefixReplace struct {
	From string `yaml:"from"`
	To   string `yaml:"to"`
}

// RegexRewrite is rewrite.regex: the first match of Match in the path is
// replaced by To, in which {N} is Match's group N.
type RegexRewrite struct {
	Match string `yaml:"match"`
	To    string `yaml:"to"`
}

// HeaderEdit is request_headers or response_headers.
type HeaderEdit struct {
	Set    Fields   `yaml:"set,omitempty"`
	Add    Fields   `yaml:"add,omitempty"`
	Remove []string `yaml:"remove,omitempty,flow"`
	ops    rewrite.HeaderOps
}

// Field is one NAME: TEMPLATE of set or add.
type Field struct {
	Name, Value string
	tmpl        rewrite.Template
}

// Fields keeps set and add in file order.
type Fields []Field

// MarshalYAML writes the mapping as it is read.
func (fs Fields) MarshalYAML() (any, error) {
	n := &yaml.Node{Kind: yaml.MappingNode}
	for _, f := range fs {
		n.Content = append(n.Content, scalar(f.Name), scalar(f.Value))
	}
	return n, nil
}

// Redirect is a route action: answer Status with a Location from To.
type Redirect struct {
	To     string `yaml:"to"`
	Status int    `yaml:"status"`
	tmpl   rewrite.Template
}

func scalar(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }

func pair(k string, v *yaml.Node) *yaml.Node {
	return &yaml.Node{Kind: yaml.MappingNode, Style: yaml.FlowStyle, Content: []*yaml.Node{scalar(k), v}}
}

// regexMsg describes a regex error without the pattern (errors do not
// echo configuration bytes).
func regexMsg(err error) string {
	var se *syntax.Error
	if errors.As(err, &se) {
		return "invalid regex (RE2 syntax): " + string(se.Code)
	}
	return "invalid regex (RE2 syntax)"
}

func (d *decoder) regex(dst *string, re **regexp.Regexp) func(*yaml.Node, string) {
	return func(v *yaml.Node, key string) {
		d.str(dst)(v, key)
		if *dst == "" {
			d.fail(v, key, "must be a non-empty regex")
			return
		}
		c, err := regexp.Compile(*dst)
		if err != nil {
			d.fail(v, key, regexMsg(err))
			return
		}
		*re = c
	}
}

// template parses a template value; a bad one fails at its line.
func (d *decoder) template(dst *string, t *rewrite.Template) func(*yaml.Node, string) {
	return func(v *yaml.Node, key string) {
		d.str(dst)(v, key)
		var err error
		if *t, err = rewrite.ParseTemplate(*dst); err != nil {
			d.fail(v, key, err.Error())
		}
	}
}

func (d *decoder) matchHeaders(m *Match, pathRE **regexp.Regexp) map[string]func(*yaml.Node, string) {
	return map[string]func(*yaml.Node, string){
		"path_regex": d.regex(&m.PathRegex, pathRE),
		"headers": func(v *yaml.Node, key string) {
			if v.Kind != yaml.MappingNode {
				d.fail(v, key, "must be a mapping of field names")
				return
			}
			for i := 0; i+1 < len(v.Content); i += 2 {
				k, e := v.Content[i], v.Content[i+1]
				h := HeaderMatch{Name: k.Value}
				hk := join(key, k.Value)
				if !rewrite.ValidName(k.Value) {
					d.fail(k, hk, "must be a field name (an RFC 9110 token)")
				}
				if e.Kind == yaml.ScalarNode {
					d.str(&h.Exact)(e, hk)
				} else {
					n := 0
					d.fields(e, hk, map[string]func(*yaml.Node, string){
						"exact":  func(v *yaml.Node, key string) { n++; h.kind = router.HeaderExact; d.str(&h.Exact)(v, key) },
						"prefix": func(v *yaml.Node, key string) { n++; h.kind = router.HeaderPrefix; d.str(&h.Prefix)(v, key) },
						"regex":  func(v *yaml.Node, key string) { n++; h.kind = router.HeaderRegex; d.regex(&h.Regex, &h.re)(v, key) },
						"present": func(v *yaml.Node, key string) {
							n++
							d.boolean(&h.Present)(v, key)
							h.kind = router.HeaderAbsent
							if h.Present != nil && *h.Present {
								h.kind = router.HeaderPresent
							}
						},
					})
					if n != 1 {
						d.fail(e, hk, "needs exactly one of exact, prefix, regex, present")
					}
				}
				m.Headers = append(m.Headers, h)
			}
		},
		"query": func(v *yaml.Node, key string) {
			if v.Kind != yaml.MappingNode {
				d.fail(v, key, "must be a mapping of parameter names to values")
				return
			}
			for i := 0; i+1 < len(v.Content); i += 2 {
				k, e := v.Content[i], v.Content[i+1]
				q := QueryMatch{Name: k.Value}
				if q.Name == "" {
					d.fail(k, join(key, k.Value), "must be a parameter name")
				}
				d.str(&q.Value)(e, join(key, k.Value))
				m.Query = append(m.Query, q)
			}
		},
	}
}

func (d *decoder) rewrite(dst **Rewrite) func(*yaml.Node, string) {
	return func(v *yaml.Node, key string) {
		rw := &Rewrite{}
		*dst = rw
		n := 0
		var err error
		d.fields(v, key, map[string]func(*yaml.Node, string){
			"strip_prefix": func(v *yaml.Node, key string) {
				n++
				d.str(&rw.StripPrefix)(v, key)
				if rw.built, err = rewrite.StripPrefix(rw.StripPrefix); err != nil {
					d.fail(v, key, err.Error())
				}
			},
			"replace_prefix": func(v *yaml.Node, key string) {
				n++
				p := &PrefixReplace{}
				rw.ReplacePrefix = p
				d.fields(v, key, map[string]func(*yaml.Node, string){"from": d.str(&p.From), "to": d.str(&p.To)})
				if rw.built, err = rewrite.ReplacePrefix(p.From, p.To); err != nil {
					d.fail(v, key, err.Error())
				}
			},
			"regex": func(v *yaml.Node, key string) {
				n++
				p := &RegexRewrite{}
				rw.Regex = p
				var re *regexp.Regexp
				var toLine *yaml.Node
				d.fields(v, key, map[string]func(*yaml.Node, string){
					"match": d.regex(&p.Match, &re),
					"to":    func(v *yaml.Node, key string) { toLine = v; d.str(&p.To)(v, key) },
				})
				if toLine == nil {
					d.fail(v, key+".to", "missing")
					return
				}
				if re == nil {
					if p.Match == "" {
						d.fail(v, key+".match", "missing")
					}
					return
				}
				if rw.built, err = rewrite.RegexReplace(re, p.To); err != nil {
					d.fail(toLine, key+".to", err.Error())
				}
			},
		})
		if n != 1 {
			d.fail(v, key, "needs exactly one of strip_prefix, replace_prefix, regex")
		}
	}
}

func (d *decoder) headerEdit(dst **HeaderEdit, side rewrite.Side) func(*yaml.Node, string) {
	fields := func(dst *Fields) func(*yaml.Node, string) {
		return func(v *yaml.Node, key string) {
			if v.Kind != yaml.MappingNode {
				d.fail(v, key, "must be a mapping of field names to values")
				return
			}
			for i := 0; i+1 < len(v.Content); i += 2 {
				k, e := v.Content[i], v.Content[i+1]
				f := Field{Name: k.Value}
				d.template(&f.Value, &f.tmpl)(e, join(key, k.Value))
				*dst = append(*dst, f)
			}
		}
	}
	return func(v *yaml.Node, key string) {
		he := &HeaderEdit{}
		*dst = he
		d.fields(v, key, map[string]func(*yaml.Node, string){
			"set":    fields(&he.Set),
			"add":    fields(&he.Add),
			"remove": d.strings(&he.Remove),
		})
		conv := func(fs Fields) []rewrite.Field {
			out := make([]rewrite.Field, 0, len(fs))
			for _, f := range fs {
				out = append(out, rewrite.Field{Name: f.Name, Value: f.tmpl})
			}
			return out
		}
		var err error
		if he.ops, err = rewrite.NewHeaderOps(side, conv(he.Set), conv(he.Add), he.Remove); err != nil {
			d.fail(v, key, err.Error())
		}
	}
}

func (d *decoder) redirect(dst **Redirect, keyLine map[string]int) func(*yaml.Node, string) {
	return func(v *yaml.Node, key string) {
		rd := &Redirect{}
		*dst = rd
		var status int64
		d.fields(v, key, map[string]func(*yaml.Node, string){
			"to": func(v *yaml.Node, key string) {
				keyLine["redirect.to"] = v.Line
				d.template(&rd.To, &rd.tmpl)(v, key)
			},
			"status": func(v *yaml.Node, key string) {
				d.integer(&status)(v, key)
				if _, err := router.Redirect(rewrite.Template{}, int(status)); err != nil {
					d.fail(v, key, "must be 301, 302, 303, 307 or 308")
				}
			},
		})
		if rd.To == "" {
			d.fail(v, key+".to", "missing")
		}
		rd.Status = int(status)
		if rd.Status == 0 {
			rd.Status = router.DefaultRedirectStatus
		}
	}
}

// validateRewrite checks what needs the whole route: the captures the
// templates name exist in match.path_regex.
func (r *Route) validateRewrite(d *decoder, key string, line func(string) *yaml.Node) {
	groups := -1
	if r.Match.re != nil {
		groups = r.Match.re.NumSubexp()
	}
	check := func(k string, t *rewrite.Template) {
		if err := t.CheckCaptures(groups); err != nil {
			d.fail(line(k), key+"."+k, err.Error())
		}
	}
	for _, e := range []struct {
		k  string
		he *HeaderEdit
	}{{"request_headers", r.RequestHeaders}, {"response_headers", r.ResponseHeaders}} {
		if e.he == nil {
			continue
		}
		for _, fs := range []Fields{e.he.Set, e.he.Add} {
			for i := range fs {
				check(e.k, &fs[i].tmpl)
			}
		}
	}
	if r.Redirect != nil {
		check("redirect.to", &r.Redirect.tmpl)
	}
}

// router returns the router's Match.
func (m *Match) router() router.Match {
	rm := router.Match{Host: m.Host, Path: m.Path, PathPrefix: m.PathPrefix, Methods: m.Methods, PathRegex: m.re}
	for _, h := range m.Headers {
		v := h.Exact
		if h.kind == router.HeaderPrefix {
			v = h.Prefix
		}
		rm.Headers = append(rm.Headers, router.HeaderMatch{Name: h.Name, Kind: h.kind, Value: v, Regex: h.re})
	}
	for _, q := range m.Query {
		rm.Query = append(rm.Query, router.QueryMatch{Name: q.Name, Value: q.Value})
	}
	return rm
}

// policy returns the route's router.Policy, nil if it has none.
func (r *Route) policy() *router.Policy {
	if r.Rewrite == nil && r.RequestHeaders == nil && r.ResponseHeaders == nil {
		return nil
	}
	p := &router.Policy{}
	if r.Rewrite != nil {
		p.Path = r.Rewrite.built
	}
	if r.RequestHeaders != nil {
		p.Request = r.RequestHeaders.ops
	}
	if r.ResponseHeaders != nil {
		p.Response = r.ResponseHeaders.ops
	}
	return p
}

// handler is the redirect action's handler.
func (rd *Redirect) handler() (server.Handler, error) {
	return router.Redirect(rd.tmpl, rd.Status)
}
