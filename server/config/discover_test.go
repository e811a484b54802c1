package config

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/simdedge/simdedge/internal/testdns"
	"github.com/simdedge/simdedge/server/router"
	"github.com/simdedge/simdedge/server/upstream"
	"golang.org/x/net/dns/dnsmessage"
)

// resolve and dns+srv:// targets (issue 32): accepted with their defaults,
// refused where they cannot apply, and built without a lookup under
// NoDiscovery (simdedge check).
func TestResolveKeys(t *testing.T) {
	for _, y := range []string{
		"upstreams: [{name: a, targets: ['api.internal:8080'], resolve: {servers: ['127.0.0.1:53'], interval: 3s, respect_ttl: false, family: ipv4}}]\nroutes: [{proxy: {upstream: a}}]\n",
		"upstreams: [{name: a, targets: ['dns+srv://_http._tcp.api.internal', '10.0.0.1:80']}]\nroutes: [{proxy: {upstream: a}}]\n",
		"upstreams: [{name: a, targets: ['https://api.internal:443'], tls: {server_name: api.internal}, resolve: {}}]\nroutes: [{proxy: {upstream: a}}]\n",
	} {
		c, err := Parse([]byte(y))
		if err != nil {
			t.Fatalf("%q: %v", y, err)
		}
		u := c.WithDefaults().Upstreams[0]
		if u.Resolve == nil || u.Resolve.Interval == 0 || u.Resolve.RespectTTL == nil || u.Resolve.Family == "" {
			t.Errorf("%q: resolve defaults not filled: %+v", y, u.Resolve)
		}
		s, err := c.Build(BuildOptions{NoDiscovery: true})
		if err != nil {
			t.Fatalf("%q: build: %v", y, err)
		}
		if len(s.discovery) != 0 {
			t.Errorf("%q: NoDiscovery built a watcher", y)
		}
		s.Close()
	}
	for _, tc := range []struct{ yaml, want string }{
		{"upstreams: [{name: a, targets: ['dns+srv://bad name']}]\nroutes: [{proxy: {upstream: a}}]\n", "upstreams[0].targets[0]: must be \"dns+srv://NAME\""},
		{"upstreams: [{name: a, targets: ['a.b:1'], resolve: {servers: ['nameserver']}}]\nroutes: [{proxy: {upstream: a}}]\n", "upstreams[0].resolve.servers[0]"},
		{"upstreams: [{name: a, targets: ['a.b:1'], resolve: {family: ipv5}}]\nroutes: [{proxy: {upstream: a}}]\n", "upstreams[0].resolve.family: must be any, ipv4 or ipv6"},
		{"upstreams: [{name: a, targets: ['https://a.b:443'], resolve: {}}]\nroutes: [{proxy: {upstream: a}}]\n", "upstreams[0].tls.server_name: needed with resolve"},
		{"upstreams: [{name: a, targets: ['h2c://a.b:1'], resolve: {}}]\nroutes: [{proxy: {upstream: a}}]\n", "upstreams[0].resolve: not for h2c://"},
	} {
		_, err := Parse([]byte(tc.yaml))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.yaml, err, tc.want)
		}
	}
}

// A name that does not resolve fails the build at the resolve key (the
// DNS server is a closed loopback port: no answer within the timeout).
func TestResolveFailureFailsBuild(t *testing.T) {
	c, err := Parse([]byte("upstreams: [{name: a, targets: ['api.invalid:80'], resolve: {servers: ['127.0.0.1:1'], timeout: 200ms}}]\nroutes: [{proxy: {upstream: a}}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Build(BuildOptions{}); err == nil || !strings.Contains(err.Error(), "upstreams[0].resolve: cannot resolve") {
		t.Fatalf("build error %v, want cannot resolve", err)
	}
}

// discoverWait bounds waiting for a watcher to report a change (TTL 1 s).
const discoverWait = 15 * time.Second

// dnsFixture is the set-up the discovery tests share: a zone that
// answers api.test with 127.0.0.2 and 127.0.0.3, a configuration that
// resolves it there, and the first snapshot built from it and started.
type dnsFixture struct {
	z      *testdns.Zone
	c      *Config
	o      BuildOptions
	signal chan struct{}
	s1     *Snapshot
	old    map[string]*upstream.Target // s1's targets by address
}

func startDNSFixture(t *testing.T, swappable bool) *dnsFixture {
	t.Helper()
	d := &dnsFixture{z: testdns.NewZone(1), signal: make(chan struct{}, 1)}
	d.z.SetA("api.test", "127.0.0.2", "127.0.0.3")
	dns := testdns.Serve(t, d.z)
	c, err := Parse([]byte(fmt.Sprintf("upstreams: [{name: api, targets: ['api.test:9'], resolve: {servers: ['%s'], family: ipv4}}]\nroutes: [{proxy: {upstream: api}}]\n", dns)))
	if err != nil {
		t.Fatal(err)
	}
	if !c.Discovers() {
		t.Fatal("Discovers: false for an upstream with resolve")
	}
	d.c = c
	d.o = BuildOptions{Swappable: swappable, OnDiscover: func() {
		select {
		case d.signal <- struct{}{}:
		default:
		}
	}}
	if d.s1, err = c.Build(d.o); err != nil {
		t.Fatal(err)
	}
	d.s1.Start(nil)
	d.old = targetsOf(d.s1)
	if len(d.old) != 2 || d.old["127.0.0.2:9"] == nil {
		t.Fatalf("first answer: %v", d.old)
	}
	return d
}

// change moves the answer to 127.0.0.3 and 127.0.0.4 and waits for the
// watcher's signal; it returns how many A questions the zone has had,
// and makes s1 the Previous of the next build.
func (d *dnsFixture) change(t *testing.T) (questions int64) {
	t.Helper()
	d.z.SetA("api.test", "127.0.0.3", "127.0.0.4")
	select {
	case <-d.signal:
	case <-time.After(discoverWait):
		t.Fatal("no discovery change signalled")
	}
	d.o.Previous = d.s1
	return d.z.Count(dnsmessage.TypeA)
}

// checkCarried checks s2 after the change: the target that stays is the
// same policy target, not retired; the one that left is retired; the
// watcher carried over; and no name was looked up again (the rebuild
// takes the watcher's answer).
func (d *dnsFixture) checkCarried(t *testing.T, s2 *Snapshot, questions int64) {
	t.Helper()
	if d.z.Count(dnsmessage.TypeA) != questions {
		t.Error("the rebuild looked the names up again instead of taking the watcher's answer")
	}
	got := targetsOf(s2)
	if len(got) != 2 || got["127.0.0.4:9"] == nil || got["127.0.0.3:9"] != d.old["127.0.0.3:9"] {
		t.Errorf("after the change: %v; the staying target must be the same one", got)
	}
	if !d.old["127.0.0.2:9"].Retired() {
		t.Error("the departed target was not retired (its connections would be reused)")
	}
	if got["127.0.0.3:9"] != nil && got["127.0.0.3:9"].Retired() {
		t.Error("the staying target was retired")
	}
	if s2.discovery["api"] != d.s1.discovery["api"] {
		t.Error("the watcher did not carry over")
	}
}

func targetsOf(s *Snapshot) map[string]*upstream.Target {
	m := map[string]*upstream.Target{}
	for _, tg := range s.Upstreams["api"].Pool().Targets() {
		m[tg.Address()] = tg
	}
	return m
}

// TestDiscoveryRefreshKeepsTargets: a changed DNS answer signals
// OnDiscover; Refresh then builds the new snapshot as a reload does: the
// target that stays is the same policy target (its health state, counters
// and idle connections carried), the one that left is retired by the old
// snapshot's Close, the watcher carries over without a lookup, and the
// router serves the new table.
func TestDiscoveryRefreshKeepsTargets(t *testing.T) {
	d := startDNSFixture(t, false)
	sw := router.NewSwitch(d.s1.Table)
	questions := d.change(t)
	s2, err := d.c.Refresh(d.o, sw)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	d.checkCarried(t, s2, questions)
}

// TestDiscoveryRebindKeepsRoutes: a changed answer reaches a Swappable
// snapshot as an xDS endpoint update does (Rebind, Commit): the routing
// table is the same one, the proxy route forwards to the new upstream,
// the staying target keeps its state and the watcher carries over.
func TestDiscoveryRebindKeepsRoutes(t *testing.T) {
	d := startDNSFixture(t, true)
	questions := d.change(t)
	s1 := d.s1
	s2, err := s1.Rebind(d.c, d.o)
	if err != nil {
		t.Fatal(err)
	}
	s2.Commit()
	s2.Start(s1)
	s1.Close()
	defer s2.Close()
	if s2.Table != s1.Table {
		t.Error("the routing table was rebuilt")
	}
	d.checkCarried(t, s2, questions)
	if len(s2.slots) == 0 {
		t.Fatal("a Swappable snapshot has no slots")
	}
	for _, sl := range s2.slots {
		if p := sl.slot.Proxy(); p == nil || p.Upstream() != s2.Upstreams["api"] {
			t.Error("the proxy route does not forward to the rebound upstream after Commit")
		}
	}
}
