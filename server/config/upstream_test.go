package config

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/proxy"
	"github.com/simdedge/simdedge/server/upstream"
)

// The server's request is what hash keys are extracted from.
var _ upstream.KeySource = (*server.Request)(nil)

const issue19Example = `upstreams:
  - name: api
    targets:
      - "127.0.0.1:9001"
      - {address: "127.0.0.1:9002", weight: 3}
    balance: p2c
    health:
      active:  {path: /healthz, interval: 5s, timeout: 1s, healthy_after: 2, unhealthy_after: 3, expect: "200-399"}
      passive: {consecutive_failures: 5, eject_for: 30s, max_ejected: 50%}
    retries: {attempts: 2, on: [connect_failure, reset, 502, 503, 504], budget: 20%, backoff: 25ms}
    timeouts: {connect: 2s, response_header: 30s, try: 10s, total: 60s}
    max_conns_per_target: 512
    queue: {size: 1024, timeout: 1s}
  - name: sticky
    targets: ["127.0.0.1:9003", "127.0.0.1:9004"]
    balance: hash
    hash: {key: "header:X-User"}
routes:
  - match: {path_prefix: /}
    proxy: {upstream: api}
`

func TestUpstreamIssueExample(t *testing.T) {
	c, err := Parse([]byte(issue19Example))
	if err != nil {
		t.Fatal(err)
	}
	u := c.Upstreams[0]
	if len(u.Targets) != 2 || u.Targets[1].Weight != 3 || u.Targets[0].Weight != 0 || u.Balance != "p2c" ||
		u.Health.Active == nil || u.Health.Active.Path != "/healthz" || *u.Health.Passive.MaxEjected != 50 ||
		*u.Retries.Attempts != 2 || len(u.Retries.On) != 5 || *u.Retries.Budget != 20 ||
		time.Duration(u.Timeouts.Try) != 10*time.Second || u.MaxConnsPerTarget != 512 || *u.Queue.Size != 1024 {
		t.Fatalf("parsed %+v", u)
	}
	o := c.WithDefaults().Upstreams[0].PoolOptions(nil)
	p, err := upstream.New(o)
	if err != nil {
		t.Fatal(err)
	}
	got := p.Options()
	if got.Balance != upstream.P2C || got.Targets[1].Weight != 3 || got.Retry.Attempts != 2 || got.Retry.BudgetPercent != 20 ||
		got.Passive.MaxEjectedPercent != 50 || got.Passive.ConsecutiveFailures != 5 || got.MaxConnsPerTarget != 512 ||
		got.Timeouts.Try != 10*time.Second || !got.Retry.On.Matches(upstream.StatusResult(504)) || got.Retry.On.Matches(upstream.StatusResult(500)) {
		t.Errorf("pool options %+v", got)
	}
	a, ok := c.Upstreams[0].ActiveOptions()
	if !ok || a.Path != "/healthz" || a.UnhealthyAfter != 3 || !a.Expect.Has(399) || a.Expect.Has(400) {
		t.Errorf("active %+v", a)
	}
	h := c.WithDefaults().Upstreams[1].PoolOptions(nil)
	if h.Balance != upstream.Hash || h.HashKey.String() != "header:X-User" {
		t.Errorf("hash options %+v", h)
	}
	// Build makes each proxy upstream's pool from these keys.
	s, err := c.Build(BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	up := s.Upstreams["api"]
	if up == nil {
		t.Fatal("no proxy upstream")
	}
	if bo := up.Pool().Options(); bo.Balance != upstream.P2C || bo.Targets[1].Weight != 3 || bo.Retry.Attempts != 2 ||
		bo.MaxConnsPerTarget != 512 || bo.Timeouts.Try != 10*time.Second || bo.Passive.ConsecutiveFailures != 5 {
		t.Errorf("built pool options %+v", bo)
	}
	if bo := s.Upstreams["sticky"].Pool().Options(); bo.Balance != upstream.Hash || bo.HashKey.String() != "header:X-User" {
		t.Errorf("built hash options %+v", bo)
	}
}

// TestBuildReloadKeepsTargets: a snapshot built with Previous keeps the
// policy's targets (health, counters, pools) of the addresses that remain
// in an upstream of the same name; once it starts, closing the previous
// snapshot retires only the targets that left.
func TestBuildReloadKeepsTargets(t *testing.T) {
	conf := func(targets string) *Config {
		c, err := Parse([]byte("upstreams:\n  - name: api\n    targets: [" + targets + "]\nroutes:\n  - proxy: {upstream: api}\n"))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	old, err := conf(`"127.0.0.1:9001", "127.0.0.1:9002"`).Build(BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	old.Start(nil)
	next, err := conf(`"127.0.0.1:9002", "127.0.0.1:9003"`).Build(BuildOptions{Previous: old})
	if err != nil {
		t.Fatal(err)
	}
	defer next.Close()
	ot, nt := old.Upstreams["api"].Pool().Targets(), next.Upstreams["api"].Pool().Targets()
	if nt[0] != ot[1] || nt[1] == ot[0] {
		t.Fatalf("kept target not carried over: %p %p / %p %p", ot[0], ot[1], nt[0], nt[1])
	}
	// A reload that fails after the upstreams were built leaves the
	// running snapshot's targets alone.
	bad, err := Parse([]byte("upstreams:\n  - name: api\n    targets: [\"127.0.0.1:9001\"]\nroutes:\n  - handler: nope\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bad.Build(BuildOptions{Previous: old}); err == nil {
		t.Fatal("bad configuration built")
	}
	if ot[0].Retired() || ot[1].Retired() {
		t.Fatal("a failed reload retired the running targets")
	}
	next.Start(old)
	old.Close()
	if !ot[0].Retired() || nt[0].Retired() || nt[1].Retired() {
		t.Errorf("retired: departed %v, kept %v, new %v", ot[0].Retired(), nt[0].Retired(), nt[1].Retired())
	}
}

// TestUpstreamDefaults: WithDefaults prints every default, the printed
// configuration parses back to the same values, and the defaults agree
// with the policy package and the proxy.
func TestUpstreamDefaults(t *testing.T) {
	c, err := Parse([]byte("upstreams:\n  - name: a\n    targets: [\"127.0.0.1:1\", {address: \"127.0.0.1:2\", weight: 2}]\n    health: {active: {}}\nroutes: [{echo: {}}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.WithDefaults().YAML()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"balance: round_robin", "consecutive_failures: 5", "eject_for: 30s", "max_ejected: 50%",
		"attempts: 1", `"on": [connect_failure, reset, "502", "503", "504"]`, "budget: 20%", "backoff: 25ms",
		"connect: 2s", "response_header: 30s", "try: 30s", "total: 1m0s", "max_conns_per_target: 0",
		"size: 1024", "timeout: 1s", "path: /", "interval: 5s", "healthy_after: 2", "unhealthy_after: 3", "expect: 200-399",
		"- 127.0.0.1:1", "address: 127.0.0.1:2", "weight: 2",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("effective config lacks %q:\n%s", want, out)
		}
	}
	again, err := Parse(out)
	if err != nil {
		t.Fatalf("effective config does not parse: %v\n%s", err, out)
	}
	a, b := c.WithDefaults().Upstreams[0].PoolOptions(nil), again.WithDefaults().Upstreams[0].PoolOptions(nil)
	if a.Retry != b.Retry || a.Passive != b.Passive || a.Timeouts != b.Timeouts || a.QueueSize != b.QueueSize || a.Targets[1] != b.Targets[1] {
		t.Errorf("round trip changed options:\n%+v\n%+v", a, b)
	}
	if upstream.DefaultConnectTimeout != proxy.DefaultConnectTimeout || upstream.DefaultResponseHeaderTimeout != proxy.DefaultResponseHeaderTimeout {
		t.Error("upstream and proxy timeout defaults differ")
	}
}

// TestUpstreamZeros: the zeros that switch things off stay off.
func TestUpstreamZeros(t *testing.T) {
	c, err := Parse([]byte(`upstreams:
  - name: a
    targets: ["127.0.0.1:1"]
    health: {passive: {consecutive_failures: 0, max_ejected: 0%}}
    retries: {attempts: 0}
    queue: {size: 0}
    max_conns_per_target: 4
  - name: b
    targets: ["127.0.0.1:1"]
    retries: {on: []}
routes: [{echo: {}}]
`))
	if err != nil {
		t.Fatal(err)
	}
	e := c.WithDefaults()
	p, err := upstream.New(e.Upstreams[0].PoolOptions(nil))
	if err != nil {
		t.Fatal(err)
	}
	o := p.Options()
	if !o.Passive.Disabled || o.Passive.MaxEjectedPercent != 0 || o.Retry.Attempts != 0 || o.QueueSize != -1 {
		t.Errorf("options %+v", o)
	}
	var held []*upstream.Target
	for range 4 {
		x, _ := p.Select(nil, nil)
		held = append(held, x)
	}
	if _, err := p.Acquire(nil, nil, &upstream.Waiter{}); !errors.Is(err, upstream.ErrQueueFull) {
		t.Errorf("queue size 0: %v", err)
	}
	for _, x := range held {
		p.Done(x, upstream.StatusResult(200))
	}
	pb, _ := upstream.New(e.Upstreams[1].PoolOptions(nil))
	if pb.Options().Retry.Attempts != 0 {
		t.Errorf("on: [] still retries: %+v", pb.Options().Retry)
	}
}

// TestUpstreamErrors: every bad value is reported at its line and key.
func TestUpstreamErrors(t *testing.T) {
	const head = "upstreams:\n  - name: a\n"
	const tail = "routes: [{echo: {}}]\n"
	const tg = "    targets: [\"127.0.0.1:1\"]\n"
	for _, tc := range []struct {
		yaml string
		line int
		key  string
	}{
		{tg + "    balance: fastest\n", 4, "upstreams[0].balance"},
		{tg + "    balance: hash\n", 4, "upstreams[0].hash.key"},
		{tg + "    hash: {key: client_ip}\n", 4, "upstreams[0].hash"},
		{tg + "    balance: hash\n    hash: {key: \"body:x\"}\n", 5, "upstreams[0].hash.key"},
		{"    targets:\n      - \"127.0.0.1:1\"\n      - {address: \"127.0.0.1:2\", weight: 0}\n", 5, "upstreams[0].targets[1].weight"},
		{"    targets:\n      - \"127.0.0.1:1\"\n      - {address: \"127.0.0.1:2\", weight: 1001}\n", 5, "upstreams[0].targets[1].weight"},
		{"    targets:\n      - \"127.0.0.1:1\"\n      - {address: \"nope\"}\n", 5, "upstreams[0].targets[1]"},
		{"    targets:\n      - \"127.0.0.1:1\"\n      - \"127.0.0.1:1\"\n", 5, "upstreams[0].targets[1]"},
		{"    targets:\n      - {address: \"127.0.0.1:1\", wieght: 2}\n", 4, "upstreams[0].targets[0].wieght"},
		{tg + "    health:\n      active: {path: healthz}\n", 5, "upstreams[0].health.active.path"},
		{tg + "    health:\n      active: {expect: \"2xx\"}\n", 5, "upstreams[0].health.active.expect"},
		{tg + "    health:\n      active: {healthy_after: 0}\n", 5, "upstreams[0].health.active.healthy_after"},
		{tg + "    health:\n      active:\n        interval: 1s\n        timeout: 2s\n", 7, "upstreams[0].health.active.timeout"},
		{tg + "    health:\n      passive: {max_ejected: 150%}\n", 5, "upstreams[0].health.passive.max_ejected"},
		{tg + "    health:\n      passive: {consecutive_failures: -1}\n", 5, "upstreams[0].health.passive.consecutive_failures"},
		{tg + "    health:\n      passive: {eject_for: soon}\n", 5, "upstreams[0].health.passive.eject_for"},
		{tg + "    retries:\n      on: [reset, 404]\n", 5, "upstreams[0].retries.on[1]"},
		{tg + "    retries: {budget: \"20 %\"}\n", 4, "upstreams[0].retries.budget"},
		{tg + "    retries: {attempts: many}\n", 4, "upstreams[0].retries.attempts"},
		{tg + "    timeouts:\n      try: 2m\n      total: 1m\n", 5, "upstreams[0].timeouts.try"},
		{tg + "    max_conns_per_target: -3\n", 4, "upstreams[0].max_conns_per_target"},
		{tg + "    queue: {timeout: 0s}\n", 4, "upstreams[0].queue.timeout"},
	} {
		_, err := Parse([]byte(head + tc.yaml + tail))
		var ce *Error
		if !errors.As(err, &ce) {
			t.Errorf("%q: error %v, want *Error", tc.yaml, err)
			continue
		}
		if ce.Line != tc.line || ce.Key != tc.key {
			t.Errorf("%q: line %d key %q, want line %d key %q (%v)", tc.yaml, ce.Line, ce.Key, tc.line, tc.key, err)
		}
	}
}

// TestUpstreamWeightSum: a schedule too long for the round-robin table is
// refused at the targets key.
func TestUpstreamWeightSum(t *testing.T) {
	var b strings.Builder
	b.WriteString("upstreams:\n  - name: a\n    targets:\n")
	for i := range 200 {
		b.WriteString("      - {address: \"127.0.0.1:" + itoa(1000+i) + "\", weight: " + itoa(999+i%2) + "}\n")
	}
	b.WriteString("routes: [{echo: {}}]\n")
	_, err := Parse([]byte(b.String()))
	var ce *Error
	if !errors.As(err, &ce) || ce.Key != "upstreams[0].targets" || ce.Line != 4 {
		t.Errorf("%v", err)
	}
}

func itoa(n int) string {
	s := ""
	for ; n > 0; n /= 10 {
		s = string(rune('0'+n%10)) + s
	}
	return s
}
