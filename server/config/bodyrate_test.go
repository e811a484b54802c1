package config

import (
	"strings"
	"testing"
	"time"

	"github.com/simdedge/simdedge/server"
)

// timeouts.body_min_rate and timeouts.body_rate_window (issue 18): parsed,
// defaulted, passed to the server, and refused with line and key.
func TestBodyRateKeys(t *testing.T) {
	c, err := Parse([]byte("timeouts: {body_min_rate: 4096, body_rate_window: 3s}\nroutes: [{echo: {}}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	o := c.ServerOptions()
	if o.Timeouts.BodyMinRate != 4096 || o.Timeouts.BodyRateWindow != 3*time.Second {
		t.Errorf("server options %+v", o.Timeouts)
	}

	c, err = Parse([]byte("routes: [{echo: {}}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	e := c.WithDefaults()
	if e.Timeouts.BodyMinRate != server.DefaultBodyMinRate || time.Duration(e.Timeouts.BodyRateWindow) != server.DefaultBodyRateWindow {
		t.Errorf("defaults %+v", e.Timeouts)
	}
	out, err := e.YAML()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "body_min_rate: 1024") || !strings.Contains(string(out), "body_rate_window: 10s") {
		t.Errorf("effective config lacks the body rate defaults:\n%s", out)
	}

	for _, tc := range []struct{ yaml, key string }{
		{"timeouts:\n  body_min_rate: -1\nroutes: [{echo: {}}]\n", "timeouts.body_min_rate"},
		{"timeouts:\n  body_min_rate: fast\nroutes: [{echo: {}}]\n", "timeouts.body_min_rate"},
		{"timeouts:\n  body_rate_window: 0s\nroutes: [{echo: {}}]\n", "timeouts.body_rate_window"},
	} {
		_, err := Parse([]byte(tc.yaml))
		if err == nil || !strings.Contains(err.Error(), "line 2: "+tc.key) {
			t.Errorf("%q: error %v, want one naming line 2 and %s", tc.yaml, err, tc.key)
		}
	}
}
