package xds

import (
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	routerv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	matcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// The test fixtures: the resources a control plane sends for an edge
// on one port with one route configuration over RDS and one EDS cluster.

func sockAddr(host string, port uint32) *corev3.Address {
	return &corev3.Address{Address: &corev3.Address_SocketAddress{SocketAddress: &corev3.SocketAddress{
		Address: host, PortSpecifier: &corev3.SocketAddress_PortValue{PortValue: port}}}}
}

func ads() *corev3.ConfigSource {
	return &corev3.ConfigSource{ResourceApiVersion: corev3.ApiVersion_V3,
		ConfigSourceSpecifier: &corev3.ConfigSource_Ads{Ads: &corev3.AggregatedConfigSource{}}}
}

func testListener(name, host string, port uint32, rds string) *listenerv3.Listener {
	router, _ := anypb.New(&routerv3.Router{})
	hcm := &hcmv3.HttpConnectionManager{
		StatPrefix: "http",
		RouteSpecifier: &hcmv3.HttpConnectionManager_Rds{Rds: &hcmv3.Rds{
			ConfigSource: ads(), RouteConfigName: rds}},
		HttpFilters: []*hcmv3.HttpFilter{{Name: "envoy.filters.http.router",
			ConfigType: &hcmv3.HttpFilter_TypedConfig{TypedConfig: router}}},
	}
	tc, _ := anypb.New(hcm)
	return &listenerv3.Listener{Name: name, Address: sockAddr(host, port),
		FilterChains: []*listenerv3.FilterChain{{Filters: []*listenerv3.Filter{{
			Name: "envoy.filters.network.http_connection_manager", ConfigType: &listenerv3.Filter_TypedConfig{TypedConfig: tc}}}}}}
}

func proxyTo(cluster string) *routev3.Route_Route {
	return &routev3.Route_Route{Route: &routev3.RouteAction{ClusterSpecifier: &routev3.RouteAction_Cluster{Cluster: cluster}}}
}

func prefix(p string) *routev3.RouteMatch {
	return &routev3.RouteMatch{PathSpecifier: &routev3.RouteMatch_Prefix{Prefix: p}}
}

func testRoutes(name, cluster string) *routev3.RouteConfiguration {
	api := &routev3.Route{Name: "api", Match: prefix("/api/"), Action: &routev3.Route_Route{Route: &routev3.RouteAction{
		ClusterSpecifier: &routev3.RouteAction_Cluster{Cluster: cluster},
		PrefixRewrite:    "/v2/",
		Timeout:          durationpb.New(3 * time.Second),
		RetryPolicy: &routev3.RetryPolicy{RetryOn: "connect-failure,gateway-error", NumRetries: wrapperspb.UInt32(2),
			PerTryTimeout: durationpb.New(time.Second)},
	}}}
	return &routev3.RouteConfiguration{Name: name, VirtualHosts: []*routev3.VirtualHost{
		{Name: "any", Domains: []string{"*"}, Routes: []*routev3.Route{
			{Name: "health", Match: &routev3.RouteMatch{PathSpecifier: &routev3.RouteMatch_Path{Path: "/healthz"}},
				Action: &routev3.Route_DirectResponse{DirectResponse: &routev3.DirectResponseAction{Status: 200,
					Body: &corev3.DataSource{Specifier: &corev3.DataSource_InlineString{InlineString: "ok\n"}}}}},
			api,
			{Name: "re", Match: &routev3.RouteMatch{
				PathSpecifier: &routev3.RouteMatch_SafeRegex{SafeRegex: &matcherv3.RegexMatcher{Regex: "/item/[0-9]+"}},
				Headers: []*routev3.HeaderMatcher{
					{Name: "x-tenant", HeaderMatchSpecifier: &routev3.HeaderMatcher_StringMatch{StringMatch: &matcherv3.StringMatcher{
						MatchPattern: &matcherv3.StringMatcher_Prefix{Prefix: "blue"}}}},
					{Name: ":method", HeaderMatchSpecifier: &routev3.HeaderMatcher_ExactMatch{ExactMatch: "GET"}},
				}}, Action: proxyTo(cluster)},
			{Name: "all", Match: prefix("/"), Action: proxyTo(cluster)},
		}},
		{Name: "www", Domains: []string{"www.example.com"}, Routes: []*routev3.Route{
			{Name: "tls", Match: prefix("/"), Action: &routev3.Route_Redirect{Redirect: &routev3.RedirectAction{
				SchemeRewriteSpecifier: &routev3.RedirectAction_HttpsRedirect{HttpsRedirect: true}}}},
		}},
	}}
}

func testCluster(name string) *clusterv3.Cluster {
	return &clusterv3.Cluster{Name: name,
		ClusterDiscoveryType: &clusterv3.Cluster_Type{Type: clusterv3.Cluster_EDS},
		EdsClusterConfig:     &clusterv3.Cluster_EdsClusterConfig{EdsConfig: ads()},
		ConnectTimeout:       durationpb.New(500 * time.Millisecond),
		LbPolicy:             clusterv3.Cluster_LEAST_REQUEST,
		OutlierDetection: &clusterv3.OutlierDetection{Consecutive_5Xx: wrapperspb.UInt32(3),
			BaseEjectionTime: durationpb.New(10 * time.Second), MaxEjectionPercent: wrapperspb.UInt32(50)},
		HealthChecks: []*corev3.HealthCheck{{Timeout: durationpb.New(time.Second), Interval: durationpb.New(2 * time.Second),
			HealthyThreshold: wrapperspb.UInt32(2), UnhealthyThreshold: wrapperspb.UInt32(3),
			HealthChecker: &corev3.HealthCheck_HttpHealthCheck_{HttpHealthCheck: &corev3.HealthCheck_HttpHealthCheck{Path: "/healthz"}}}},
		CircuitBreakers: &clusterv3.CircuitBreakers{Thresholds: []*clusterv3.CircuitBreakers_Thresholds{{
			MaxConnections: wrapperspb.UInt32(10), MaxPendingRequests: wrapperspb.UInt32(64)}}},
	}
}

// ep is an endpoint at host:port with a weight (0: none) and health.
type ep struct {
	host   string
	port   uint32
	weight uint32
	health corev3.HealthStatus
	prio   uint32
}

func testAssignment(name string, eps ...ep) *endpointv3.ClusterLoadAssignment {
	cla := &endpointv3.ClusterLoadAssignment{ClusterName: name}
	for _, e := range eps {
		lb := &endpointv3.LbEndpoint{HealthStatus: e.health,
			HostIdentifier: &endpointv3.LbEndpoint_Endpoint{Endpoint: &endpointv3.Endpoint{Address: sockAddr(e.host, e.port)}}}
		if e.weight > 0 {
			lb.LoadBalancingWeight = wrapperspb.UInt32(e.weight)
		}
		cla.Endpoints = append(cla.Endpoints, &endpointv3.LocalityLbEndpoints{Priority: e.prio, LbEndpoints: []*endpointv3.LbEndpoint{lb}})
	}
	return cla
}

func testResources() *Resources {
	return &Resources{
		Listeners: map[string]*listenerv3.Listener{"edge": testListener("edge", "127.0.0.1", 18080, "local")},
		Routes:    map[string]*routev3.RouteConfiguration{"local": testRoutes("local", "backend")},
		Clusters:  map[string]*clusterv3.Cluster{"backend": testCluster("backend")},
		Endpoints: map[string]*endpointv3.ClusterLoadAssignment{"backend": testAssignment("backend",
			ep{host: "127.0.0.1", port: 9001, weight: 2}, ep{host: "127.0.0.1", port: 9002},
			ep{host: "127.0.0.1", port: 9003, health: corev3.HealthStatus_UNHEALTHY},
			ep{host: "127.0.0.1", port: 9009, prio: 1})},
	}
}
