package xds

import (
	"errors"
	"maps"
	"slices"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
)

// Resources are the resources of the four types last accepted, by name.
type Resources struct {
	Listeners map[string]*listenerv3.Listener
	Routes    map[string]*routev3.RouteConfiguration
	Clusters  map[string]*clusterv3.Cluster
	Endpoints map[string]*endpointv3.ClusterLoadAssignment
}

// ErrIncomplete: a listener names a RouteConfiguration that has not
// arrived (RDS after LDS); not a NACK, the client waits for it.
var ErrIncomplete = errors.New("xds: waiting for a route configuration")

// unavailable is the answer of a route whose cluster has no endpoint
// to send to, as Envoy's.
var unavailable = Respond{Status: 503, Body: "no healthy upstream\n"}

// Translate maps the resources onto listeners, routes and upstreams. It
// refuses, naming the resource and field, anything simdedge would not
// serve as the control plane means it.
func Translate(r *Resources) (*Fragment, error) {
	f := &Fragment{}
	rc, err := readListeners(r, f)
	if err != nil {
		return nil, err
	}
	clusters := map[string]clusterOut{}
	for _, name := range slices.Sorted(maps.Keys(r.Clusters)) {
		c, err := readCluster(r.Clusters[name])
		if err != nil {
			return nil, err
		}
		clusters[c.up.Name] = c
	}
	if rc == nil {
		return f, nil
	}
	routes, refs, err := readRoutes(rc)
	if err != nil {
		return nil, err
	}
	made := map[string]bool{}  // upstreams emitted
	empty := map[string]bool{} // upstreams without targets
	for _, ref := range refs {
		name := variantName(ref.cluster, ref.policy)
		if made[name] || empty[name] {
			continue
		}
		c, ok := clusters[ref.cluster]
		if !ok {
			return nil, &FieldError{Kind: "route_configuration", Resource: safeName(rc.GetName()),
				Field: ref.path, Msg: "names cluster " + safeName(ref.cluster) + ", which the control plane did not send", Err: ErrUnknownCluster}
		}
		up, err := variant(c, ref.policy)
		if err != nil {
			return nil, err
		}
		if up.Targets, err = targets(c, r); err != nil {
			return nil, err
		}
		if len(up.Targets) == 0 {
			empty[name] = true
			continue
		}
		if c.maxConns > 0 {
			n := len(up.Targets)
			up.MaxConnsPerTarget = (c.maxConns + n - 1) / n
		}
		made[name] = true
		f.Upstreams = append(f.Upstreams, up)
	}
	for i := range routes {
		if p := routes[i].Proxy; p != nil && empty[p.Upstream] {
			routes[i].Proxy, routes[i].Rewrite = nil, nil
			resp := unavailable
			routes[i].Respond = &resp
		}
	}
	f.Routes = routes
	return f, nil
}

// readListeners maps every listener and returns the one route
// configuration they share (nil without listeners): simdedge has one
// route table for all its listeners, so listeners that name different
// route configurations are refused.
func readListeners(r *Resources, f *Fragment) (*routev3.RouteConfiguration, error) {
	var rc *routev3.RouteConfiguration
	var first string
	for _, name := range slices.Sorted(maps.Keys(r.Listeners)) {
		l, err := readListener(r.Listeners[name])
		if err != nil {
			return nil, err
		}
		f.Listeners = append(f.Listeners, Listener{Transport: "tcp", Address: l.address})
		this := l.inline
		if l.rds != "" {
			if this = r.Routes[l.rds]; this == nil {
				return nil, ErrIncomplete
			}
		}
		if rc == nil {
			rc, first = this, name
			continue
		}
		if !sameRoutes(rc, this) {
			return nil, at{"listener", name}.refused("filter_chains[0].filters[0].typed_config (a route configuration other than listener " + safeName(first) + "'s: simdedge has one route table)")
		}
	}
	return rc, nil
}

// variant is the cluster's upstream with a route's timeouts, retries and
// hash key.
func variant(c clusterOut, p *routeUpstream) (Upstream, error) {
	up := c.up
	up.Name = variantName(c.up.cluster, p)
	if c.up.Timeouts != nil {
		t := *c.up.Timeouts
		up.Timeouts = &t
	}
	if c.up.Retries != nil {
		rt := *c.up.Retries
		up.Retries = &rt
	}
	a := at{"cluster", c.up.cluster}
	if up.Balance == "hash" {
		// A ring hash or Maglev cluster without a route hash policy
		// picks at random in Envoy.
		up.Balance = "random"
	}
	if p == nil {
		return up, nil
	}
	if p.total != "" || p.try != "" {
		if up.Timeouts == nil {
			up.Timeouts = &Timeouts{}
		}
		up.Timeouts.Total, up.Timeouts.Try = p.total, p.try
	}
	if p.retries != nil {
		if up.Retries == nil {
			up.Retries = &Retries{}
		}
		up.Retries.Attempts, up.Retries.On, up.Retries.Backoff = p.retries.Attempts, p.retries.On, p.retries.Backoff
	}
	if p.hashKey != "" {
		if c.up.Balance != "hash" {
			return up, a.refused("lb_policy (a route hashes on " + safeName(p.hashKey) + ": needs RING_HASH or MAGLEV)")
		}
		up.Balance, up.Hash = "hash", &Hash{Key: p.hashKey}
	}
	return up, nil
}

// targets are the cluster's endpoints: EDS's assignment (none until it
// arrives) or the cluster's own.
func targets(c clusterOut, r *Resources) ([]Target, error) {
	if c.inline != nil {
		return readEndpoints(c.inline, "cluster", c.up.cluster)
	}
	cla := r.Endpoints[c.eds]
	if cla == nil {
		return nil, nil
	}
	return readEndpoints(cla, "cluster_load_assignment", c.eds)
}

// RouteNames are the RouteConfigurations the listeners name over RDS:
// the names the client subscribes to.
func RouteNames(ls map[string]*listenerv3.Listener) []string {
	var out []string
	for _, l := range ls {
		if o, err := readListener(l); err == nil && o.rds != "" {
			out = append(out, o.rds)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// EndpointNames are the ClusterLoadAssignments the EDS clusters name.
func EndpointNames(cs map[string]*clusterv3.Cluster) []string {
	var out []string
	for _, c := range cs {
		if o, err := readCluster(c); err == nil && o.eds != "" {
			out = append(out, o.eds)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Complete reports whether every route configuration the listeners name
// and every assignment the EDS clusters name has arrived: a start waits
// for that (initial_fetch_timeout), as Envoy warms clusters and
// listeners before it serves them.
func Complete(r *Resources) bool {
	for _, n := range RouteNames(r.Listeners) {
		if r.Routes[n] == nil {
			return false
		}
	}
	for _, n := range EndpointNames(r.Clusters) {
		if r.Endpoints[n] == nil {
			return false
		}
	}
	return true
}
