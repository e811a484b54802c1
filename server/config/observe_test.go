package config

import (
	"strings"
	"testing"

	"github.com/simdedge/simdedge/server/accesslog"
)

func TestObserveConfig(t *testing.T) {
	const routes = "routes:\n  - match: {path: /}\n    respond: {status: 200}\n"
	c, err := Parse([]byte("access_log: {path: /var/log/a.log, format: combined, sample: 0.5}\nrequest_id: {header: X-Trace-Id, generate: false}\ntrace: {generate: true}\n" + routes))
	if err != nil {
		t.Fatal(err)
	}
	lo, ok := c.AccessLogOptions()
	if !ok || lo.Path != "/var/log/a.log" || lo.Format != accesslog.Combined || lo.Sample != 0.5 {
		t.Errorf("access log options %+v %v", lo, ok)
	}
	o := c.ServerOptions()
	if o.RequestID.Header != "X-Trace-Id" || o.RequestID.Generate || !o.Trace.Propagate || !o.Trace.Generate {
		t.Errorf("server options %+v %+v", o.RequestID, o.Trace)
	}
	// Defaults: no access log, no request IDs, trace propagated but not
	// started; once present, the keys' defaults fill in.
	c, err = Parse([]byte(routes))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := c.AccessLogOptions(); ok {
		t.Error("access log on by default")
	}
	o = c.ServerOptions()
	if o.RequestID.Header != "" || !o.Trace.Propagate || o.Trace.Generate {
		t.Errorf("default options %+v %+v", o.RequestID, o.Trace)
	}
	out, err := c.WithDefaults().YAML()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "trace:\n    propagate: true\n    generate: false") {
		t.Errorf("effective config lacks the trace defaults:\n%s", out)
	}
	c, err = Parse([]byte("access_log: {}\nrequest_id: {}\n" + routes))
	if err != nil {
		t.Fatal(err)
	}
	if lo, ok := c.AccessLogOptions(); !ok || lo.Path != "stdout" || lo.Format != accesslog.JSON || lo.Sample != 1 {
		t.Errorf("access log defaults %+v", lo)
	}
	if o := c.ServerOptions(); o.RequestID.Header != "X-Request-Id" || !o.RequestID.Generate {
		t.Errorf("request_id defaults %+v", o.RequestID)
	}
	for _, tc := range []struct{ in, want string }{
		{"access_log: {format: xml}\n", "line 1: access_log.format: must be json or combined"},
		{"access_log: {sample: 0}\n", "access_log.sample: must be a number in (0, 1]"},
		{"access_log: {sample: 1.5}\n", "access_log.sample: must be a number in (0, 1]"},
		{"access_log:\n  path: \"\"\n", "line 2: access_log.path: must not be empty"},
		{"access_log: {rotate: true}\n", "access_log.rotate: unknown key"},
		{"request_id: {header: \"X Request\"}\n", "request_id.header: must be a field name"},
		{"request_id: {generate: maybe}\n", "request_id.generate: must be true or false"},
		{"trace: {propagate: 1}\n", "trace.propagate: must be true or false"},
		{"trace: 3\n", "trace: must be a mapping"},
	} {
		_, err := Parse([]byte(tc.in + routes))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err %v, want %q", tc.in, err, tc.want)
		}
	}
}
