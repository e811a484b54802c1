package config

import (
	"errors"
	"strings"
	"testing"
)

// okRoute completes a configuration that needs a route to be valid.
const okRoute = "routes:\n  - match: {path_prefix: /}\n    respond: {status: 200}\n"

// parseErrors is Parse's errors, one per element.
func parseErrors(t *testing.T, yaml string) []error {
	t.Helper()
	c, err := Parse([]byte(yaml))
	if err == nil {
		t.Fatalf("accepted:\n%s\n(%+v)", yaml, c)
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// TestOneErrorPerMistake: each configuration holds one mistake, and Parse
// reports exactly one error for it, at its line and key path, with a
// stable text. Before, a failed value left a zero (or its bad text) in
// its field, and later checks judged it: a misspelt balance policy also
// failed the pool's own check ("targets: unknown balance policy"), and
// `rate: five` gave three errors, the last a false "missing".
func TestOneErrorPerMistake(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		want       string // the error's whole text
	}{
		// The cases of issue 29.
		{"misspelt balance policy",
			"upstreams:\n  - name: app\n    targets: [\"127.0.0.1:9001\"]\n    balance: round_robbin\n" + okRoute,
			`config: line 4: upstreams[0].balance: must be round_robin, least_conn, p2c, random or hash`},
		{"rate not a number",
			"routes:\n  - match: {path_prefix: /}\n    rate_limit: {rate: five}\n    respond: {status: 200}\n",
			`config: line 3: routes[0].rate_limit.rate: must be a number`},
		{"indentation slip",
			"listen: \"127.0.0.1:8080\"\nroutes:\n  - match: {path_prefix: /}\n    respond:\n      status: 200\n     body: x\n",
			`config: line 6: yaml: did not find expected key (check this line's indentation)`},
		{"target port out of range",
			"upstreams:\n  - name: app\n    targets: [\"127.0.0.1:310810\"]\n" + okRoute,
			`config: line 3: upstreams[0].targets[0]: port 310810 is out of range (1-65535)`},
		{"unknown key close to a known one",
			"upstreams:\n  - name: app\n    targets: [\"127.0.0.1:9001\"]\n    balanse: p2c\n" + okRoute,
			`config: line 4: upstreams[0].balanse: unknown key, did you mean "balance"?`},

		// Unknown keys: suggestions come from the keys of that level only,
		// and a misspelt required key is not also "missing".
		{"unknown key far from any",
			"upstreams:\n  - name: app\n    targets: [\"127.0.0.1:9001\"]\n    colour: blue\n" + okRoute,
			`config: line 4: upstreams[0].colour: unknown key`},
		{"key of another level",
			"path_prefix: /\n" + okRoute,
			`config: line 1: path_prefix: unknown key`},
		{"transposed letters",
			"routes:\n  - match: {path_prefix: /}\n    respond: {stauts: 200}\n",
			`config: line 3: routes[0].respond.stauts: unknown key, did you mean "status"?`},
		{"dashes and case",
			"routes:\n  - match: {Path-Prefix: /}\n    echo: {}\n",
			`config: line 2: routes[0].match.Path-Prefix: unknown key, did you mean "path_prefix"?`},
		{"misspelt required key",
			"routes:\n  - match: {path_prefix: /}\n    rate_limit: {rtae: 5}\n    respond: {status: 200}\n",
			`config: line 3: routes[0].rate_limit.rtae: unknown key, did you mean "rate"?`},
		{"misspelt required mapping",
			"routes:\n  - match: {path_prefix: /}\n    basic_auth: {realm: x, user: {a: b}}\n    respond: {status: 200}\n",
			`config: line 3: routes[0].basic_auth.user: unknown key, did you mean "users"?`},
		{"misspelt required key of an action",
			"routes:\n  - match: {path_prefix: /}\n    redirect: {too: /x}\n",
			`config: line 3: routes[0].redirect.too: unknown key, did you mean "to"?`},
		{"misspelt certificates",
			"listeners:\n  - {address: \"127.0.0.1:1\", tls: {certificate: [{cert: a, key: b}]}}\n" + okRoute,
			`config: line 2: listeners[0].tls.certificate: unknown key, did you mean "certificates"?`},
		{"misspelt upstream name",
			"upstreams:\n  - nmae: app\n    targets: [\"127.0.0.1:9001\"]\nroutes:\n  - match: {path_prefix: /}\n    proxy: {upstream: app}\n",
			`config: line 2: upstreams[0].nmae: unknown key, did you mean "name"?`},
		{"misspelt routes",
			"route:\n  - match: {path_prefix: /}\n    respond: {status: 200}\n",
			`config: line 1: route: unknown key, did you mean "routes"?`},
		{"misspelt tls of another listener",
			"listeners:\n  - {address: \"127.0.0.1:1\", tsl: {certificates: [{cert: a, key: b}]}}\n  - {address: \"127.0.0.1:2\", redirect_to_https: true}\n" + okRoute,
			`config: line 2: listeners[0].tsl: unknown key, did you mean "tls"?`},
		{"unprintable key",
			"\"rou\\ntes\": 1\n" + okRoute,
			`config: line 1: "rou\ntes": unknown key, did you mean "routes"?`},

		// A value of the wrong kind, and what depends on it.
		{"targets not a list",
			"upstreams:\n  - name: app\n    targets: \"127.0.0.1:9001\"\nroutes:\n  - match: {path_prefix: /}\n    proxy: {upstream: app}\n",
			`config: line 3: upstreams[0].targets: must be a list`},
		{"weight not a number",
			"upstreams:\n  - name: app\n    targets: [{address: \"127.0.0.1:9001\", weight: x}]\n" + okRoute,
			`config: line 3: upstreams[0].targets[0].weight: must be an integer`},
		{"duration",
			"timeouts:\n  idle: forever\n" + okRoute,
			`config: line 2: timeouts.idle: must be a duration such as "10s" or "1m30s"`},
		{"interval, with a timeout checked against it",
			"upstreams:\n  - name: app\n    targets: [\"127.0.0.1:1\"]\n    health: {active: {interval: x, timeout: 5s}}\n" + okRoute,
			`config: line 4: upstreams[0].health.active.interval: must be a duration such as "10s" or "1m30s"`},
		{"max_age, with preload checked against it",
			"routes:\n  - match: {path_prefix: /}\n    hsts: {max_age: x, preload: true}\n    respond: {status: 200}\n",
			`config: line 3: routes[0].hsts.max_age: must be an integer`},
		{"balance, with hash checked against it",
			"upstreams:\n  - name: app\n    targets: [\"127.0.0.1:1\"]\n    balance: hsah\n    hash: {key: path}\n" + okRoute,
			`config: line 4: upstreams[0].balance: must be round_robin, least_conn, p2c, random or hash`},
		{"engine, with loops checked against it",
			"engine: lop\nlisteners:\n  - {address: \"127.0.0.1:1\", loops: 2}\n" + okRoute,
			`config: line 1: engine: must be "loop" or "goroutine"`},
		{"regex, with captures checked against it",
			"routes:\n  - match: {path_regex: \"(\"}\n    request_headers: {set: {X-A: \"$1\"}}\n    echo: {}\n",
			`config: line 2: routes[0].match.path_regex: invalid regex (RE2 syntax): missing closing )`},
		{"untrusted_forwarding, with header edits checked against it",
			"untrusted_forwarding: nope\nroutes:\n  - match: {path_prefix: /}\n    request_headers: {set: {X-Real-IP: a}}\n    echo: {}\n",
			`config: line 1: untrusted_forwarding: must be "drop", "overwrite" or "pass"`},
		{"document not a mapping",
			"- a\n- b\n",
			`config: line 1: (document): must be a mapping`},
		{"duplicate key",
			"listen: \"127.0.0.1:1\"\nlisten: \"127.0.0.1:2\"\n" + okRoute,
			`config: line 2: listen: duplicate key`},

		// Ranges and references.
		{"listener port out of range",
			"listeners:\n  - {address: \"127.0.0.1:70000\"}\n" + okRoute,
			`config: line 2: listeners[0].address: port 70000 is out of range (0-65535)`},
		{"admin port out of range",
			"admin: {address: \"127.0.0.1:99999\"}\n" + okRoute,
			`config: line 1: admin.address: port 99999 is out of range (0-65535)`},
		{"URL target port zero",
			"upstreams:\n  - name: app\n    targets: [\"http://127.0.0.1:0\"]\n" + okRoute,
			`config: line 3: upstreams[0].targets[0]: port 0 is out of range (1-65535)`},
		{"target port too long to name",
			"upstreams:\n  - name: app\n    targets: [\"127.0.0.1:99999999999999\"]\n" + okRoute,
			`config: line 3: upstreams[0].targets[0]: port is out of range (1-65535)`},
		{"target without a port",
			"upstreams:\n  - name: app\n    targets: [\"127.0.0.1\"]\n" + okRoute,
			`config: line 3: upstreams[0].targets[0]: must be "host:port" or "scheme://host:port[?options]"`},
		{"status out of range",
			"routes:\n  - match: {path_prefix: /}\n    respond:\n      status: 42\n",
			`config: line 4: routes[0].respond.status: must be 200-999`},
		{"rate out of range",
			"routes:\n  - match: {path_prefix: /}\n    rate_limit: {rate: 0}\n    respond: {status: 200}\n",
			`config: line 3: routes[0].rate_limit.rate: must be a positive number of requests per second, at most 1e9`},
		{"no such upstream",
			"routes:\n  - match: {path_prefix: /}\n    proxy: {upstream: nope}\n",
			`config: line 3: routes[0].proxy.upstream: names no upstream`},
		{"no action",
			"routes:\n  - match: {path_prefix: /}\n",
			`config: line 2: routes[0]: needs exactly one action: respond, echo, handler, proxy, redirect or files`},
		{"required key absent",
			"routes:\n  - match: {path_prefix: /}\n    files: {}\n",
			`config: line 3: routes[0].files.root: missing`},

		// YAML syntax: the line of the mistake.
		{"indentation slip, CR line breaks",
			"routes:\r  - match: {path_prefix: /}\r    respond:\r      status: 200\r     body: x\r",
			`config: line 5: yaml: did not find expected key (check this line's indentation)`},
		{"indentation slip, CR LF line breaks",
			"routes:\r\n  - match: {path_prefix: /}\r\n    respond:\r\n      status: 200\r\n     body: x\r\n",
			`config: line 5: yaml: did not find expected key (check this line's indentation)`},
		{"tab indentation",
			"routes:\n  - match: {path_prefix: /}\n\t  echo: {}\n",
			`config: line 3: yaml: found character that cannot start any token`},
		{"list item out of line",
			okRoute + "  - match: {path_prefix: /a}\n  respond: {status: 200}\n",
			`config: line 5: yaml: did not find expected '-' indicator (check this line's indentation)`},
		{"unterminated string",
			"listen: \"127.0.0.1:1\"\nroutes:\n  - match: {path_prefix: /}\n    respond: {status: 200, body: \"open}\n",
			`config: line 4: yaml: found unexpected end of stream`},
		{"value after a value",
			"listen: a: b\n" + okRoute,
			`config: line 1: yaml: mapping values are not allowed in this context`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := parseErrors(t, tc.yaml)
			if len(errs) != 1 {
				t.Fatalf("%d errors, want 1:\n%v", len(errs), errors.Join(errs...))
			}
			var ce *Error
			if !errors.As(errs[0], &ce) {
				t.Fatalf("%v: not an *Error", errs[0])
			}
			if got := errs[0].Error(); got != tc.want {
				t.Errorf("error\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

// TestIndependentMistakesAllReported: the rules that drop consequences
// keep independent mistakes, in one mapping, in one route, and in
// different parts of the file.
func TestIndependentMistakesAllReported(t *testing.T) {
	for _, tc := range []struct {
		yaml string
		want []string
	}{
		{"limits: {max_headers: -1, max_conns: x}\n" + okRoute,
			[]string{"limits.max_headers: must not be negative", "limits.max_conns: must be an integer"}},
		{"routes:\n  - match: {path_prefix: /, methods: 5}\n    rate_limit: {rate: x}\n    respond: {status: 200}\n",
			[]string{"routes[0].match.methods: must be a list", "routes[0].rate_limit.rate: must be a number"}},
		{"upstreams:\n  - name: app\n    targets: [\"127.0.0.1:1\"]\n    balance: x\nroutes:\n  - match: {path_prefix: /}\n    proxy: {upstream: nope}\n  - match: {path_prefix: /}\n    respond: {status: 42}\n",
			[]string{"upstreams[0].balance: must be", "routes[0].proxy.upstream: names no upstream", "routes[1].respond.status: must be 200-999"}},
		{"upstreams:\n  - name: a\n    targets: [\"127.0.0.1:310810\"]\n    balanse: p2c\n" + okRoute,
			[]string{"targets[0]: port 310810 is out of range", "upstreams[0].balanse: unknown key"}},
		{"upstreams:\n  - name: a\n    targets: [\"127.0.0.1:0\", \"127.0.0.1:70000\"]\n" + okRoute,
			[]string{"targets[0]: port 0 is out of range", "targets[1]: port 70000 is out of range"}},
	} {
		errs := parseErrors(t, tc.yaml)
		if len(errs) != len(tc.want) {
			t.Errorf("%q: %d errors, want %d:\n%v", tc.yaml, len(errs), len(tc.want), errors.Join(errs...))
			continue
		}
		for i, w := range tc.want {
			if !strings.Contains(errs[i].Error(), w) {
				t.Errorf("%q: error %d is %q, want %q", tc.yaml, i, errs[i], w)
			}
		}
	}
}

func TestEditDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"", "abc", 3}, {"abc", "", 3}, {"rate", "rate", 0},
		{"rtae", "rate", 1}, {"balanse", "balance", 1}, {"path_prefx", "path_prefix", 1},
		{"ca", "abc", 3}, {"tls", "ttl", 2}, {"kitten", "sitting", 3},
	} {
		if got := editDistance(tc.a, tc.b); got != tc.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
