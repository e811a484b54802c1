package xds

import (
	"net"
	"strconv"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	routerv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	"google.golang.org/protobuf/proto"
)

// Type URLs of the resources and the typed configs simdedge reads.
const (
	ListenerType = "type.googleapis.com/envoy.config.listener.v3.Listener"
	RouteType    = "type.googleapis.com/envoy.config.route.v3.RouteConfiguration"
	ClusterType  = "type.googleapis.com/envoy.config.cluster.v3.Cluster"
	EndpointType = "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment"

	hcmType    = "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager"
	routerType = "type.googleapis.com/envoy.extensions.filters.http.router.v3.Router"
)

// listenerOut is one Listener read: its address and where its routes
// come from (inline, or RDS by name).
type listenerOut struct {
	address string
	inline  *routev3.RouteConfiguration
	rds     string
}

// readListener maps a Listener with one filter chain holding one
// HttpConnectionManager onto a tcp listener.
func readListener(l *listenerv3.Listener) (listenerOut, error) {
	a := at{"listener", l.GetName()}
	var out listenerOut
	if err := a.known(l, "", "name", "address", "filter_chains", "stat_prefix"); err != nil {
		return out, err
	}
	addr, err := a.socketAddress(l.GetAddress(), "address")
	if err != nil {
		return out, err
	}
	out.address = addr
	if len(l.GetFilterChains()) != 1 {
		return out, a.invalid("filter_chains", "needs exactly one filter chain")
	}
	fc := l.GetFilterChains()[0]
	if err := a.known(fc, "filter_chains[0]", "name", "filters"); err != nil {
		return out, err
	}
	if len(fc.GetFilters()) != 1 {
		return out, a.invalid("filter_chains[0].filters", "needs exactly one filter, an http_connection_manager")
	}
	f := fc.GetFilters()[0]
	fpath := "filter_chains[0].filters[0]"
	if err := a.known(f, fpath, "name", "typed_config"); err != nil {
		return out, err
	}
	if f.GetTypedConfig().GetTypeUrl() != hcmType {
		return out, a.refused(fpath + ".typed_config (only HttpConnectionManager)")
	}
	hcm := &hcmv3.HttpConnectionManager{}
	if err := f.GetTypedConfig().UnmarshalTo(hcm); err != nil {
		return out, a.invalid(fpath+".typed_config", "does not decode")
	}
	hpath := fpath + ".typed_config"
	if err := a.known(hcm, hpath, "stat_prefix", "codec_type", "route_config", "rds", "http_filters"); err != nil {
		return out, err
	}
	if err := a.httpFilters(hcm.GetHttpFilters(), hpath+".http_filters"); err != nil {
		return out, err
	}
	switch {
	case hcm.GetRouteConfig() != nil:
		out.inline = hcm.GetRouteConfig()
	case hcm.GetRds() != nil:
		rds := hcm.GetRds()
		if err := a.known(rds, hpath+".rds", "config_source", "route_config_name"); err != nil {
			return out, err
		}
		if err := a.adsSource(rds.GetConfigSource(), hpath+".rds.config_source"); err != nil {
			return out, err
		}
		if rds.GetRouteConfigName() == "" {
			return out, a.invalid(hpath+".rds.route_config_name", "missing")
		}
		out.rds = rds.GetRouteConfigName()
	default:
		return out, a.invalid(hpath, "needs route_config or rds")
	}
	return out, nil
}

// httpFilters accepts the router filter alone (or none): simdedge's
// policies are its own route keys, not Envoy filters.
func (a at) httpFilters(fs []*hcmv3.HttpFilter, path string) error {
	for i, f := range fs {
		p := path + "[" + strconv.Itoa(i) + "]"
		if err := a.known(f, p, "name", "typed_config"); err != nil {
			return err
		}
		if tc := f.GetTypedConfig(); tc != nil {
			if tc.GetTypeUrl() != routerType {
				return a.refused(p + " (only the router filter)")
			}
			r := &routerv3.Router{}
			if err := tc.UnmarshalTo(r); err != nil {
				return a.invalid(p+".typed_config", "does not decode")
			}
			if err := a.known(r, p+".typed_config"); err != nil {
				return err
			}
		} else if f.GetName() != "envoy.filters.http.router" {
			return a.refused(p + " (only the router filter)")
		}
	}
	return nil
}

// adsSource accepts a ConfigSource that says "over the ADS stream".
func (a at) adsSource(cs *corev3.ConfigSource, path string) error {
	if cs == nil {
		return a.invalid(path, "missing")
	}
	if err := a.known(cs, path, "ads", "resource_api_version", "initial_fetch_timeout"); err != nil {
		return err
	}
	if cs.GetAds() == nil {
		return a.refused(path + " (only ads)")
	}
	return nil
}

// socketAddress renders a TCP SocketAddress as host:port.
func (a at) socketAddress(ad *corev3.Address, path string) (string, error) {
	if ad == nil {
		return "", a.invalid(path, "missing")
	}
	if err := a.known(ad, path, "socket_address"); err != nil {
		return "", err
	}
	sa := ad.GetSocketAddress()
	sp := path + ".socket_address"
	if sa == nil {
		return "", a.invalid(sp, "missing")
	}
	if err := a.known(sa, sp, "address", "port_value", "protocol"); err != nil {
		return "", err
	}
	if sa.GetProtocol() != corev3.SocketAddress_TCP {
		return "", a.refused(sp + ".protocol (only TCP)")
	}
	host := sa.GetAddress()
	if host == "" || !validHost(host) {
		return "", a.invalid(sp+".address", "must be an IP address or a host name")
	}
	port := sa.GetPortValue()
	if port == 0 || port > 65535 {
		return "", a.invalid(sp+".port_value", "must be 1-65535")
	}
	return net.JoinHostPort(host, strconv.Itoa(int(port))), nil
}

// validHost: an IP address or a DNS name of printable name characters.
func validHost(h string) bool {
	if net.ParseIP(h) != nil {
		return true
	}
	if len(h) > 253 {
		return false
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_') {
			return false
		}
	}
	return true
}

// sameRoutes: two listeners' inline route configurations are the same.
func sameRoutes(a, b *routev3.RouteConfiguration) bool { return proto.Equal(a, b) }
