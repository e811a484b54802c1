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

// TestDiscoveryRefreshKeepsTargets: a changed DNS answer signals
// OnDiscover; Refresh then builds the new snapshot as a reload does: the
// target that stays is the same policy target (its health state, counters
// and idle connections carried), the one that left is retired by the old
// snapshot's Close, the watcher carries over without a lookup, and the
// router serves the new table.
func TestDiscoveryRefreshKeepsTargets(t *testing.T) {
	z := testdns.NewZone(1)
	z.SetA("api.test", "127.0.0.2", "127.0.0.3")
	dns := testdns.Serve(t, z)
	c, err := Parse([]byte(fmt.Sprintf("upstreams: [{name: api, targets: ['api.test:9'], resolve: {servers: ['%s'], family: ipv4}}]\nroutes: [{proxy: {upstream: api}}]\n", dns)))
	if err != nil {
		t.Fatal(err)
	}
	signal := make(chan struct{}, 1)
	o := BuildOptions{OnDiscover: func() {
		select {
		case signal <- struct{}{}:
		default:
		}
	}}
	s1, err := c.Build(o)
	if err != nil {
		t.Fatal(err)
	}
	sw := router.NewSwitch(s1.Table)
	s1.Start(nil)
	old := map[string]*upstream.Target{}
	for _, tg := range s1.Upstreams["api"].Pool().Targets() {
		old[tg.Address()] = tg
	}
	if len(old) != 2 || old["127.0.0.2:9"] == nil {
		t.Fatalf("first answer: %v", old)
	}
	z.SetA("api.test", "127.0.0.3", "127.0.0.4")
	select {
	case <-signal:
	case <-time.After(discoverWait):
		t.Fatal("no discovery change signalled")
	}
	questions := z.Count(dnsmessage.TypeA)
	o.Previous = s1
	s2, err := c.Refresh(o, sw)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if z.Count(dnsmessage.TypeA) != questions {
		t.Error("the rebuild looked the names up again instead of taking the watcher's answer")
	}
	got := map[string]*upstream.Target{}
	for _, tg := range s2.Upstreams["api"].Pool().Targets() {
		got[tg.Address()] = tg
	}
	if len(got) != 2 || got["127.0.0.4:9"] == nil || got["127.0.0.3:9"] != old["127.0.0.3:9"] {
		t.Errorf("after the change: %v; the staying target must be the same one", got)
	}
	if !old["127.0.0.2:9"].Retired() {
		t.Error("the departed target was not retired (its connections would be reused)")
	}
	if got["127.0.0.3:9"].Retired() {
		t.Error("the staying target was retired")
	}
	if s2.discovery["api"] != s1.discovery["api"] {
		t.Error("the watcher did not carry over")
	}
}

// TestDiscoveryRebindKeepsRoutes: a changed answer reaches a Swappable
// snapshot as an xDS endpoint update does (Rebind, Commit): the routing
// table is the same one, the proxy route forwards to the new upstream,
// the staying target keeps its state and the watcher carries over.
func TestDiscoveryRebindKeepsRoutes(t *testing.T) {
	z := testdns.NewZone(1)
	z.SetA("api.test", "127.0.0.2", "127.0.0.3")
	dns := testdns.Serve(t, z)
	c, err := Parse([]byte(fmt.Sprintf("upstreams: [{name: api, targets: ['api.test:9'], resolve: {servers: ['%s'], family: ipv4}}]\nroutes: [{proxy: {upstream: api}}]\n", dns)))
	if err != nil {
		t.Fatal(err)
	}
	if !c.Discovers() {
		t.Fatal("Discovers: false for an upstream with resolve")
	}
	signal := make(chan struct{}, 1)
	o := BuildOptions{Swappable: c.Discovers(), OnDiscover: func() {
		select {
		case signal <- struct{}{}:
		default:
		}
	}}
	s1, err := c.Build(o)
	if err != nil {
		t.Fatal(err)
	}
	s1.Start(nil)
	old := map[string]*upstream.Target{}
	for _, tg := range s1.Upstreams["api"].Pool().Targets() {
		old[tg.Address()] = tg
	}
	z.SetA("api.test", "127.0.0.3", "127.0.0.4")
	select {
	case <-signal:
	case <-time.After(discoverWait):
		t.Fatal("no discovery change signalled")
	}
	questions := z.Count(dnsmessage.TypeA)
	o.Previous = s1
	s2, err := s1.Rebind(c, o)
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
	if z.Count(dnsmessage.TypeA) != questions {
		t.Error("the rebind looked the names up again instead of taking the watcher's answer")
	}
	got := map[string]*upstream.Target{}
	for _, tg := range s2.Upstreams["api"].Pool().Targets() {
		got[tg.Address()] = tg
	}
	if len(got) != 2 || got["127.0.0.4:9"] == nil || got["127.0.0.3:9"] != old["127.0.0.3:9"] {
		t.Errorf("after the change: %v; the staying target must be the same one", got)
	}
	if !old["127.0.0.2:9"].Retired() {
		t.Error("the departed target was not retired")
	}
	if s2.discovery["api"] != s1.discovery["api"] {
		t.Error("the watcher did not carry over")
	}
	if len(s2.slots) == 0 {
		t.Fatal("a Swappable snapshot has no slots")
	}
	for _, sl := range s2.slots {
		if p := sl.slot.Proxy(); p == nil || p.Upstream() != s2.Upstreams["api"] {
			t.Error("the proxy route does not forward to the rebound upstream after Commit")
		}
	}
}
