package config

import (
	"strings"
	"testing"

	"github.com/simdedge/simdedge/server/ratelimit/rls"
)

const serviceYAML = `routes:
  - rate_limit:
      service:
        address: "127.0.0.1:8081"
        domain: edge
        descriptors:
          - entries: [{key: remote_address, value: "{client_ip}"}]
    respond: {status: 200}
`

// rate_limit.service parses in every build; Build refuses it without
// -tags fleet, naming the tag, and builds it with the tag.
func TestRateLimitServiceBuild(t *testing.T) {
	c, err := Parse([]byte(serviceYAML))
	if err != nil {
		t.Fatal(err)
	}
	e := c.Routes[0].gateDefaults().RateLimit.Service
	if e.FailureMode != "allow" || e.Timeout == 0 {
		t.Errorf("defaults not filled: %+v", e)
	}
	s, err := c.Build(BuildOptions{})
	switch {
	case rls.Enabled && err != nil:
		t.Fatalf("fleet build refused: %v", err)
	case !rls.Enabled && (err == nil || !strings.Contains(err.Error(), "-tags fleet")):
		t.Fatalf("build error %v, want one naming -tags fleet", err)
	}
	if s != nil {
		s.Close()
	}
}

func TestRateLimitServiceErrors(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{strings.Replace(serviceYAML, `"127.0.0.1:8081"`, `"nowhere"`, 1), "rate_limit.service.address: must be \"host:port\""},
		{strings.Replace(serviceYAML, "        domain: edge\n", "", 1), "rate_limit.service.domain: missing"},
		{strings.Replace(serviceYAML, "{client_ip}", "{nope}", 1), "entries[0].value: rewrite: unknown variable"},
		{strings.Replace(serviceYAML, "{client_ip}", "{1}", 1), "captures are not available"},
		{strings.Replace(serviceYAML, "domain: edge", "domain: edge\n        failure_mode: maybe", 1), "failure_mode: must be allow or deny"},
		{"routes: [{rate_limit: {burst: 3}, respond: {status: 200}}]\n", "rate_limit.rate: missing (or give a service)"},
	} {
		_, err := Parse([]byte(tc.yaml))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.yaml, err, tc.want)
		}
	}
}
