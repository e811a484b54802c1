package fleettest

import (
	"net"
	"strconv"
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	routerv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	matcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	cachetypes "github.com/envoyproxy/go-control-plane/pkg/cache/types"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"
)

// The resources of the tests: one listener per edge (on its own port),
// one route configuration over RDS, one EDS cluster "app".
const (
	routeName   = "edge-routes"
	clusterName = "app"
)

func address(hostport string) *corev3.Address {
	host, port, _ := net.SplitHostPort(hostport)
	p, _ := strconv.Atoi(port)
	return &corev3.Address{Address: &corev3.Address_SocketAddress{SocketAddress: &corev3.SocketAddress{
		Address: host, PortSpecifier: &corev3.SocketAddress_PortValue{PortValue: uint32(p)}}}}
}

func adsSource() *corev3.ConfigSource {
	return &corev3.ConfigSource{ResourceApiVersion: corev3.ApiVersion_V3,
		ConfigSourceSpecifier: &corev3.ConfigSource_Ads{Ads: &corev3.AggregatedConfigSource{}}}
}

func listener(addr string) *listenerv3.Listener {
	router, _ := anypb.New(&routerv3.Router{})
	hcm, _ := anypb.New(&hcmv3.HttpConnectionManager{StatPrefix: "edge",
		RouteSpecifier: &hcmv3.HttpConnectionManager_Rds{Rds: &hcmv3.Rds{ConfigSource: adsSource(), RouteConfigName: routeName}},
		HttpFilters: []*hcmv3.HttpFilter{{Name: "envoy.filters.http.router",
			ConfigType: &hcmv3.HttpFilter_TypedConfig{TypedConfig: router}}}})
	return &listenerv3.Listener{Name: "edge", Address: address(addr),
		FilterChains: []*listenerv3.FilterChain{{Filters: []*listenerv3.Filter{{Name: "envoy.filters.network.http_connection_manager",
			ConfigType: &listenerv3.Filter_TypedConfig{TypedConfig: hcm}}}}}}
}

// routes answers /version with body and proxies /app/ to the cluster;
// badRegex adds a route whose regex does not compile.
func routes(body string, badRegex bool) *routev3.RouteConfiguration {
	rs := []*routev3.Route{
		{Name: "version", Match: &routev3.RouteMatch{PathSpecifier: &routev3.RouteMatch_Path{Path: "/version"}},
			Action: &routev3.Route_DirectResponse{DirectResponse: &routev3.DirectResponseAction{Status: 200,
				Body: &corev3.DataSource{Specifier: &corev3.DataSource_InlineString{InlineString: body}}}}},
		{Name: "app", Match: &routev3.RouteMatch{PathSpecifier: &routev3.RouteMatch_Prefix{Prefix: "/app/"}},
			Action: &routev3.Route_Route{Route: &routev3.RouteAction{ClusterSpecifier: &routev3.RouteAction_Cluster{Cluster: clusterName},
				RetryPolicy: &routev3.RetryPolicy{RetryOn: "connect-failure,reset"}}}},
	}
	if badRegex {
		rs = append(rs, &routev3.Route{Name: "bad", Match: &routev3.RouteMatch{PathSpecifier: &routev3.RouteMatch_SafeRegex{
			SafeRegex: &matcherv3.RegexMatcher{Regex: "/bad/(unclosed"}}}, Action: &routev3.Route_DirectResponse{
			DirectResponse: &routev3.DirectResponseAction{Status: 204}}})
	}
	return &routev3.RouteConfiguration{Name: routeName, VirtualHosts: []*routev3.VirtualHost{{Name: "all", Domains: []string{"*"}, Routes: rs}}}
}

func cluster() *clusterv3.Cluster {
	return &clusterv3.Cluster{Name: clusterName,
		ClusterDiscoveryType: &clusterv3.Cluster_Type{Type: clusterv3.Cluster_EDS},
		EdsClusterConfig:     &clusterv3.Cluster_EdsClusterConfig{EdsConfig: adsSource()},
		ConnectTimeout:       durationpb.New(time.Second),
		LbPolicy:             clusterv3.Cluster_ROUND_ROBIN}
}

func assignment(backends ...string) *endpointv3.ClusterLoadAssignment {
	cla := &endpointv3.ClusterLoadAssignment{ClusterName: clusterName, Endpoints: []*endpointv3.LocalityLbEndpoints{{}}}
	for _, b := range backends {
		cla.Endpoints[0].LbEndpoints = append(cla.Endpoints[0].LbEndpoints, &endpointv3.LbEndpoint{
			HostIdentifier: &endpointv3.LbEndpoint_Endpoint{Endpoint: &endpointv3.Endpoint{Address: address(b)}}})
	}
	return cla
}

// newState serves body at /version and the app on backends; listen maps
// each node to its listener's address.
func newState(listen map[string]string, body string, backends ...string) *state {
	return &state{
		versions: [4]string{"1", "1", "1", "1"},
		listeners: func(node string) []cachetypes.Resource {
			return []cachetypes.Resource{listener(listen[node])}
		},
		routes:    []cachetypes.Resource{routes(body, false)},
		clusters:  []cachetypes.Resource{cluster()},
		endpoints: []cachetypes.Resource{assignment(backends...)},
	}
}
