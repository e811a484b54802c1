package config

import (
	"errors"
	"strings"
	"testing"
)

const rewriteExample = `upstreams:
  - {name: api, targets: ["127.0.0.1:9001"]}
routes:
  - match:
      path_regex: "^/api/(v[0-9]+)/"
      headers: {X-Tenant: blue, X-Env: {prefix: prod}, X-Id: {regex: "^[0-9]+$"}, X-Beta: {present: true}, X-Old: {present: false}}
      query: {debug: "1"}
    rewrite: {strip_prefix: /api}
    request_headers:  {set: {X-Client: "{client_ip}"}, add: {X-Version: "{1}"}, remove: [X-Debug]}
    response_headers: {set: {X-Served-By: edge}, remove: [Server]}
    proxy: {upstream: api}
  - match: {path_prefix: /a/}
    rewrite: {replace_prefix: {from: /a/, to: /b/}}
    echo: {}
  - match: {path_prefix: /r/}
    rewrite: {regex: {match: "^/r/([a-z]+)", to: "/{1}/x"}}
    echo: {}
  - match: {path_prefix: /old/}
    redirect: {to: "https://{host}{uri}"}
`

// TestRewriteConfig: every issue 23 matching and rewriting key parses,
// builds, prints with its default (redirect status 308) and reads back.
func TestRewriteConfig(t *testing.T) {
	c, err := Parse([]byte(rewriteExample))
	if err != nil {
		t.Fatal(err)
	}
	m := c.Routes[0].Match
	if m.PathRegex == "" || len(m.Headers) != 5 || m.Headers[1].Prefix != "prod" || len(m.Query) != 1 ||
		c.Routes[0].Rewrite.StripPrefix != "/api" || c.Routes[3].Redirect.Status != 308 {
		t.Fatalf("parsed %+v", c.Routes)
	}
	s, err := c.Build(BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	out, err := c.WithDefaults().YAML()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"path_regex:", "X-Beta:", "present: true", "present: false", "prefix: prod", "status: 308", "strip_prefix: /api", "debug: \"1\""} {
		if !strings.Contains(string(out), want) {
			t.Errorf("effective config lacks %q:\n%s", want, out)
		}
	}
	if _, err := Parse(out); err != nil {
		t.Errorf("effective config does not parse: %v\n%s", err, out)
	}
}

// TestRewriteConfigErrors: bad regexes, templates, names and statuses are
// errors at their line and key, and never echo the configuration's bytes.
func TestRewriteConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		name, route string
		line        int
		key, msg    string
	}{
		{"bad path_regex", "  - match: {path_regex: \"^/(a\"}\n    echo: {}\n", 2, "routes[0].match.path_regex", "missing closing )"},
		{"bad header regex", "  - match:\n      headers: {X-A: {regex: \"[z-a]\"}}\n    echo: {}\n", 3, "routes[0].match.headers.X-A.regex", "invalid character class range"},
		{"header two kinds", "  - match:\n      headers: {X-A: {prefix: a, exact: b}}\n    echo: {}\n", 3, "routes[0].match.headers.X-A", "exactly one"},
		{"header name", "  - match:\n      headers: {\"X A\": b}\n    echo: {}\n", 3, "routes[0].match.headers.X A", "token"},
		{"unknown variable", "  - match: {path: /}\n    request_headers: {set: {X-A: \"{nope}\"}}\n    echo: {}\n", 3, "routes[0].request_headers.set.X-A", "unknown variable"},
		{"unclosed", "  - match: {path: /}\n    response_headers:\n      add: {X-A: \"{host\"}\n    echo: {}\n", 4, "routes[0].response_headers.add.X-A", "without '}'"},
		{"capture without regex", "  - match: {path: /}\n    request_headers: {set: {X-A: \"{1}\"}}\n    echo: {}\n", 3, "routes[0].request_headers", "need a regex"},
		{"capture out of range", "  - match: {path_regex: \"^/(a)\"}\n    redirect:\n      to: \"/{2}\"\n", 4, "routes[0].redirect.to", "out of range"},
		{"reserved field", "  - match: {path: /}\n    request_headers: {remove: [Content-Length]}\n    echo: {}\n", 3, "routes[0].request_headers", "cannot be edited"},
		{"host removed", "  - match: {path: /}\n    request_headers: {remove: [host]}\n    echo: {}\n", 3, "routes[0].request_headers", "Host"},
		{"status", "  - match: {path: /}\n    redirect: {to: /x, status: 200}\n", 3, "routes[0].redirect.status", "301, 302"},
		{"no to", "  - match: {path: /}\n    redirect: {status: 301}\n", 3, "routes[0].redirect.to", "missing"},
		{"two rewrites", "  - match: {path: /}\n    rewrite: {strip_prefix: /a, regex: {match: a, to: b}}\n    echo: {}\n", 3, "routes[0].rewrite", "exactly one"},
		{"bad prefix", "  - match: {path: /}\n    rewrite: {strip_prefix: api}\n    echo: {}\n", 3, "routes[0].rewrite.strip_prefix", "start with '/'"},
		{"rewrite regex", "  - match: {path: /}\n    rewrite:\n      regex: {match: \"(\", to: /}\n    echo: {}\n", 4, "routes[0].rewrite.regex.match", "missing closing )"},
		{"rewrite to query", "  - match: {path: /}\n    rewrite:\n      regex:\n        match: \"^/(a)\"\n        to: \"/{1}?x\"\n    echo: {}\n", 6, "routes[0].rewrite.regex.to", "'?'"},
		{"control in template", "  - match: {path: /}\n    response_headers: {set: {X-A: \"a\\r\\nB: c\"}}\n    echo: {}\n", 3, "routes[0].response_headers.set.X-A", "control"},
	} {
		_, err := Parse([]byte("routes:\n" + tc.route))
		var ce *Error
		found := false
		for _, e := range unjoin(err) {
			if errors.As(e, &ce) && ce.Line == tc.line && ce.Key == tc.key && strings.Contains(ce.Msg, tc.msg) {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: got %v, want line %d key %s msg ~%q", tc.name, err, tc.line, tc.key, tc.msg)
		}
		if err != nil && (strings.Contains(err.Error(), "[z-a]") || strings.Contains(err.Error(), "^/(a")) {
			t.Errorf("%s: error echoes the configuration: %v", tc.name, err)
		}
	}
}
