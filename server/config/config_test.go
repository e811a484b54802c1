package config

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/simdedge/simdedge/server"
)

const issueExample = `listen: "127.0.0.1:8080"
limits:   {max_header_bytes: 65536, max_headers: 100, max_body_bytes: 10485760}
timeouts: {read_header: 10s, idle: 60s, write: 30s, drain: 15s}
upstreams:
  - name: app
    targets: ["127.0.0.1:9001", "127.0.0.1:9002"]
    timeouts: {connect: 2s, response_header: 30s}
routes:
  - match: {path_prefix: /healthz}
    respond: {status: 200, body: "ok\n"}
  - match: {path_prefix: /echo}
    echo: {}
  - match: {host: "api.example.com", path_prefix: /, methods: [GET, POST]}
    proxy: {upstream: app}
`

func TestParseIssueExample(t *testing.T) {
	c, err := Parse([]byte(issueExample))
	if err != nil {
		t.Fatal(err)
	}
	if c.Listen != "127.0.0.1:8080" || c.Limits.MaxBodyBytes != 10485760 || time.Duration(c.Timeouts.Idle) != time.Minute ||
		len(c.Upstreams) != 1 || len(c.Upstreams[0].Targets) != 2 || time.Duration(c.Upstreams[0].Timeouts.Connect) != 2*time.Second ||
		len(c.Routes) != 3 || c.Routes[0].Respond.Body != "ok\n" || c.Routes[1].Echo == nil ||
		c.Routes[2].Proxy.Upstream != "app" || c.Routes[2].Match.Host != "api.example.com" || len(c.Routes[2].Match.Methods) != 2 {
		t.Fatalf("parsed %+v", c)
	}
	s, err := c.Build(BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if len(s.Table.Routes()) != 3 || s.Upstreams["app"] == nil {
		t.Fatalf("built %+v", s)
	}
	o := c.ServerOptions()
	if o.Timeouts.ReadHeader != 10*time.Second || o.Limits.MaxHeaders != 100 {
		t.Errorf("server options %+v", o)
	}
	// The effective config round-trips.
	out, err := c.WithDefaults().YAML()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Parse(out); err != nil {
		t.Errorf("effective config does not parse: %v\n%s", err, out)
	}
}

// TestErrorsNameLineAndKey: every validation error carries the line and the
// dotted key of the offending value.
func TestErrorsNameLineAndKey(t *testing.T) {
	for _, tc := range []struct {
		yaml string
		line int
		key  string
	}{
		{"listen: x\nroutez: []\n", 2, "routez"},
		{"timeouts:\n  idle: forever\nroutes: [{echo: {}}]\n", 2, "timeouts.idle"},
		{"limits:\n  max_headers: -1\nroutes: [{echo: {}}]\n", 2, "limits.max_headers"},
		{"routes:\n  - match: {path_prefix: /}\n    proxy: {upstream: nope}\n", 3, "routes[0].proxy.upstream"},
		{"routes:\n  - match: {path_prefix: /}\n    echo: {}\n    respond: {status: 200}\n", 2, "routes[0]"},
		{"routes:\n  - match: {path_prefix: /}\n    respond:\n      status: 42\n", 4, "routes[0].respond.status"},
		{"routes:\n  - match: {path_prefix: nope}\n    echo: {}\n", 2, "routes[0].match"},
		{"upstreams:\n  - name: a\n    targets: [\"no-port\"]\nroutes: [{echo: {}}]\n", 3, "upstreams[0].targets[0]"},
		{"upstreams:\n  - name: a\nroutes: [{echo: {}}]\n", 2, "upstreams[0]"},
		{"routes:\n  - match: {host: \"a*b\"}\n    echo: {}\n", 2, "routes[0].match.host"},
		{"routes:\n  - echo: {}\n    echo: {}\n", 3, "routes[0].echo"},
	} {
		_, err := Parse([]byte(tc.yaml))
		var ce *Error
		if !errors.As(err, &ce) {
			t.Errorf("%q: error %v, want *Error", tc.yaml, err)
			continue
		}
		if ce.Line != tc.line || ce.Key != tc.key {
			t.Errorf("%q: line %d key %q, want line %d key %q (%v)", tc.yaml, ce.Line, ce.Key, tc.line, tc.key, err)
		}
		if !strings.Contains(err.Error(), tc.key) {
			t.Errorf("message %q does not name the key", err)
		}
	}
	if _, err := Parse([]byte("listen: [\n")); err == nil {
		t.Error("YAML syntax error accepted")
	}
	if _, err := Parse(nil); err == nil {
		t.Error("empty config accepted")
	}
}

func TestBuildNamedThings(t *testing.T) {
	c, err := Parse([]byte("upstreams:\n  - name: demo\n    builtin: demo\nroutes:\n  - match: {path: /x}\n    handler: mine\n  - match: {path_prefix: /demo/}\n    proxy: {upstream: demo}\n"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Build(BuildOptions{})
	if err == nil || !strings.Contains(err.Error(), "line 3") || !strings.Contains(err.Error(), "line 6") {
		t.Errorf("missing builtin and handler: %v", err)
	}
	h := server.HandlerFunc(func(w *server.ResponseWriter, r *server.Request) {})
	s, err := c.Build(BuildOptions{Handlers: map[string]server.Handler{"mine": h}, Builtins: map[string][]string{"demo": {"127.0.0.1:1"}}})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
}
