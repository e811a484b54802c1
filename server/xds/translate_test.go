package xds

import (
	"errors"
	"strings"
	"testing"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	matcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	"github.com/simdedge/simdedge/server/config"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

const dynamicOnly = "dynamic: {xds: {server: \"127.0.0.1:18000\", node_id: edge-1}}\n"

func mustStatic(t *testing.T, file string) *config.Config {
	t.Helper()
	c, err := config.Parse([]byte(file))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func translateMerge(t *testing.T, r *Resources, file string) (*config.Config, error) {
	t.Helper()
	return merged(r, file, mustStatic(t, file))
}

// merged is r translated and merged beside static, the configuration
// parsed from file, as the fleet build takes a complete set.
func merged(r *Resources, file string, static *config.Config) (*config.Config, error) {
	f, err := Translate(r)
	if err != nil {
		return nil, err
	}
	return Merge([]byte(file), static, f)
}

func TestTranslate(t *testing.T) {
	c, err := translateMerge(t, testResources(), dynamicOnly)
	if err != nil {
		t.Fatal(err)
	}
	if ls := c.EffectiveListeners(); len(ls) != 1 || ls[0].Address != "127.0.0.1:18080" {
		t.Errorf("listeners = %+v", ls)
	}
	// www.example.com's route first (an exact domain), then "*"'s in order.
	var names []string
	for _, r := range c.Routes {
		names = append(names, r.Name)
	}
	want := []string{"xds:local/www/www.example.com/tls", "xds:local/any/*/health", "xds:local/any/*/api", "xds:local/any/*/re", "xds:local/any/*/all"}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Fatalf("routes = %q, want %q", names, want)
	}
	www, health, api, re, all := c.Routes[0], c.Routes[1], c.Routes[2], c.Routes[3], c.Routes[4]
	if www.Match.Host != "www.example.com" || www.Redirect == nil || www.Redirect.To != "https://{host}{uri}" || www.Redirect.Status != 301 {
		t.Errorf("redirect route = %+v %+v", www.Match, www.Redirect)
	}
	if health.Match.Path != "/healthz" || health.Respond == nil || health.Respond.Status != 200 || health.Respond.Body != "ok\n" {
		t.Errorf("direct response route = %+v", health)
	}
	if api.Match.PathPrefix != "/api/" || api.Rewrite == nil || api.Rewrite.ReplacePrefix == nil ||
		api.Rewrite.ReplacePrefix.From != "/api/" || api.Rewrite.ReplacePrefix.To != "/v2/" {
		t.Errorf("api route = %+v %+v", api.Match, api.Rewrite)
	}
	if re.Match.PathRegex != "^(?:/item/[0-9]+)$" || len(re.Match.Methods) != 1 || re.Match.Methods[0] != "GET" ||
		len(re.Match.Headers) != 1 || re.Match.Headers[0].Name != "x-tenant" || re.Match.Headers[0].Prefix != "blue" {
		t.Errorf("regex route = %+v", re.Match)
	}
	if all.Proxy == nil || all.Proxy.Upstream != "backend" {
		t.Errorf("catch-all route = %+v", all.Proxy)
	}
	ups := map[string]config.Upstream{}
	for _, u := range c.Upstreams {
		ups[u.Name] = u
	}
	b, ok := ups["backend"]
	if !ok || len(ups) != 2 {
		t.Fatalf("upstreams = %v", ups)
	}
	// Priority 0's healthy endpoints only; the weight kept.
	if len(b.Targets) != 2 || b.Targets[0].Address != "127.0.0.1:9001" || b.Targets[0].Weight != 2 || b.Targets[1].Address != "127.0.0.1:9002" {
		t.Errorf("targets = %+v", b.Targets)
	}
	if b.Balance != "p2c" || b.MaxConnsPerTarget != 5 || *b.Queue.Size != 64 || *b.Health.Passive.ConsecutiveFailures != 3 ||
		b.Health.Active == nil || b.Health.Active.Path != "/healthz" || b.Health.Active.HealthyAfter != 2 {
		t.Errorf("backend = %+v health %+v", b, b.Health)
	}
	v := ups[api.Proxy.Upstream]
	if v.Name == "backend" || v.Retries.Attempts == nil || *v.Retries.Attempts != 2 || strings.Join(v.Retries.On, ",") != "502,503,504,connect_failure" ||
		v.Timeouts.Total != config.Duration(3e9) || v.Timeouts.Try != config.Duration(1e9) || len(v.Targets) != 2 {
		t.Errorf("api's upstream %q = %+v", api.Proxy.Upstream, v)
	}
}

// TestTranslateFallsBack: with no healthy endpoint at priority 0,
// priority 1's serve; with none at all, the routes answer 503.
func TestTranslateFallsBack(t *testing.T) {
	r := testResources()
	r.Endpoints["backend"] = testAssignment("backend", ep{host: "127.0.0.1", port: 9003, health: corev3.HealthStatus_DRAINING}, ep{host: "::1", port: 9009, prio: 1})
	c, err := translateMerge(t, r, dynamicOnly)
	if err != nil {
		t.Fatal(err)
	}
	if u := c.Upstreams[0]; len(u.Targets) != 1 || u.Targets[0].Address != "[::1]:9009" {
		t.Errorf("targets = %+v", u.Targets)
	}
	delete(r.Endpoints, "backend")
	if Complete(r) {
		t.Error("Complete without the assignment")
	}
	c, err = translateMerge(t, r, dynamicOnly)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Upstreams) != 0 || c.Routes[4].Respond == nil || c.Routes[4].Respond.Status != 503 {
		t.Errorf("without endpoints: upstreams %v, last route %+v", c.Upstreams, c.Routes[4])
	}
}

func TestTranslateStatic(t *testing.T) {
	static := dynamicOnly + "listen: \"127.0.0.1:8081\"\nupstreams: [{name: local, targets: [\"127.0.0.1:7000\"]}]\nroutes:\n  - {match: {path: /static}, proxy: {upstream: local}}\n"
	c, err := translateMerge(t, testResources(), static)
	if err != nil {
		t.Fatal(err)
	}
	if c.Routes[0].Match.Path != "/static" || len(c.Routes) != 6 || len(c.EffectiveListeners()) != 2 {
		t.Errorf("static first: %+v, %d routes, %d listeners", c.Routes[0].Match, len(c.Routes), len(c.EffectiveListeners()))
	}
	clash := dynamicOnly + "upstreams: [{name: backend, targets: [\"127.0.0.1:7000\"]}]\nroutes: [{proxy: {upstream: backend}}]\n"
	if _, err := translateMerge(t, testResources(), clash); !errors.Is(err, ErrClash) || !strings.Contains(err.Error(), "cluster \"backend\": name") {
		t.Errorf("upstream clash: %v", err)
	}
	clash = dynamicOnly + "listen: \"127.0.0.1:18080\"\nroutes: [{respond: {status: 200}}]\n"
	if _, err := translateMerge(t, testResources(), clash); !errors.Is(err, ErrClash) {
		t.Errorf("listener clash: %v", err)
	}
}

// TestTranslateRefuses: every NACK names the resource and the field.
func TestTranslateRefuses(t *testing.T) {
	vh := func(r *Resources) *routev3.VirtualHost { return r.Routes["local"].VirtualHosts[0] }
	for _, tc := range []struct {
		name     string
		edit     func(r *Resources)
		sentinel error
		want     string
	}{
		{"bad regex", func(r *Resources) {
			vh(r).Routes[2].Match.PathSpecifier = &routev3.RouteMatch_SafeRegex{SafeRegex: &matcherv3.RegexMatcher{Regex: "(unclosed"}}
		}, ErrInvalid, `route_configuration "local": virtual_hosts[0].routes[2].match.safe_regex.regex: does not compile as RE2`},
		{"unknown cluster", func(r *Resources) {
			vh(r).Routes[3].Action = proxyTo("nowhere")
		}, ErrUnknownCluster, `route_configuration "local": virtual_hosts[0].routes[3].route.cluster: names cluster "nowhere"`},
		{"refused route field", func(r *Resources) {
			vh(r).Routes[3].Decorator = &routev3.Decorator{Operation: "x"}
		}, ErrRefused, `virtual_hosts[0].routes[3].decorator: not supported`},
		{"refused cluster field", func(r *Resources) {
			r.Clusters["backend"].PerConnectionBufferLimitBytes = wrapperspb.UInt32(1)
		}, ErrRefused, `cluster "backend": per_connection_buffer_limit_bytes: not supported`},
		{"refused lb policy", func(r *Resources) {
			r.Clusters["backend"].LbPolicy = clusterv3.Cluster_CLUSTER_PROVIDED
		}, ErrRefused, `cluster "backend": lb_policy (CLUSTER_PROVIDED)`},
		{"retry condition", func(r *Resources) {
			vh(r).Routes[1].GetRoute().RetryPolicy.RetryOn = "retriable-4xx"
		}, ErrRefused, `retry_policy.retry_on (condition "retriable-4xx"`},
		{"bad port", func(r *Resources) {
			r.Endpoints["backend"] = testAssignment("backend", ep{host: "127.0.0.1", port: 70000})
		}, ErrInvalid, `cluster_load_assignment "backend": endpoints[0].lb_endpoints[0].endpoint.address.socket_address.port_value`},
		{"weighted clusters", func(r *Resources) {
			vh(r).Routes[3].GetRoute().ClusterSpecifier = &routev3.RouteAction_WeightedClusters{}
		}, ErrRefused, `routes[3].route.weighted_clusters: not supported`},
		{"prefix wildcard domain", func(r *Resources) {
			vh(r).Domains = []string{"www.*"}
		}, ErrRefused, `virtual_hosts[0].domains[0]`},
		{"hash without ring", func(r *Resources) {
			vh(r).Routes[3].GetRoute().HashPolicy = []*routev3.RouteAction_HashPolicy{{PolicySpecifier: &routev3.RouteAction_HashPolicy_Header_{
				Header: &routev3.RouteAction_HashPolicy_Header{HeaderName: "x-user"}}}}
		}, ErrRefused, `cluster "backend": lb_policy (a route hashes`},
		{"name echo bounded", func(r *Resources) {
			r.Clusters["backend"].Name = "bad\x00name"
		}, ErrInvalid, `cluster "bad\x00name": name`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := testResources()
			tc.edit(r)
			_, err := translateMerge(t, r, dynamicOnly)
			if !errors.Is(err, tc.sentinel) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v\nwant %v containing %q", err, tc.sentinel, tc.want)
			}
		})
	}
}

func TestTranslateHash(t *testing.T) {
	r := testResources()
	r.Clusters["backend"].LbPolicy = clusterv3.Cluster_MAGLEV
	r.Routes["local"].VirtualHosts[0].Routes[3].GetRoute().HashPolicy = []*routev3.RouteAction_HashPolicy{{PolicySpecifier: &routev3.RouteAction_HashPolicy_Cookie_{
		Cookie: &routev3.RouteAction_HashPolicy_Cookie{Name: "session"}}}}
	c, err := translateMerge(t, r, dynamicOnly)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range c.Upstreams {
		switch {
		case u.Name == "backend" && u.Balance != "random":
			t.Errorf("maglev without a hash policy: balance %q", u.Balance)
		case strings.HasSuffix(u.Name, ",hcookie:session") && (u.Balance != "hash" || u.Hash == nil || u.Hash.Key != "cookie:session"):
			t.Errorf("hashed variant %q: %+v", u.Name, u)
		}
	}
}

// TestTranslateWaitsForRoutes: a listener whose RDS has not arrived is
// not a NACK.
func TestTranslateWaitsForRoutes(t *testing.T) {
	r := testResources()
	delete(r.Routes, "local")
	if _, err := Translate(r); !errors.Is(err, ErrIncomplete) {
		t.Errorf("err = %v", err)
	}
	if got := RouteNames(r.Listeners); len(got) != 1 || got[0] != "local" {
		t.Errorf("RouteNames = %v", got)
	}
	if got := EndpointNames(r.Clusters); len(got) != 1 || got[0] != "backend" {
		t.Errorf("EndpointNames = %v", got)
	}
}

// TestTranslateDNSCluster: a STRICT_DNS cluster's endpoints are its own
// load_assignment, re-resolved as upstreams[].resolve does.
func TestTranslateDNSCluster(t *testing.T) {
	r := testResources()
	c := r.Clusters["backend"]
	c.ClusterDiscoveryType = &clusterv3.Cluster_Type{Type: clusterv3.Cluster_STRICT_DNS}
	c.EdsClusterConfig = nil
	c.LoadAssignment = testAssignment("backend", ep{host: "backend.internal", port: 8080})
	delete(r.Endpoints, "backend")
	f, err := Translate(r)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := Merge([]byte(dynamicOnly), mustStatic(t, dynamicOnly), f)
	if err != nil {
		t.Fatal(err)
	}
	u := cfg.Upstreams[0]
	if u.Resolve == nil || len(u.Targets) != 1 || u.Targets[0].Address != "backend.internal:8080" {
		t.Errorf("dns cluster = %+v", u)
	}
}
