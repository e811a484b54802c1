package xds

import (
	"errors"
	"maps"
	"slices"
	"strconv"
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	statuspb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
)

// maxResources bounds the resources of one response.
const maxResources = 100000

// ErrUnknownType: a response of a type the client did not ask for.
var ErrUnknownType = errors.New("xds: response of a type simdedge did not subscribe to")

// sender sends a request of one type: an ACK (detail nil) or a NACK.
type sender func(typ, version, nonce string, detail error) error

// handle takes one response: decode and check each resource, then, if
// the whole set is complete, apply it; ACK what is accepted, NACK (with
// the version last accepted, and the error naming the field) what is
// not; and follow the names the accepted listeners and clusters need.
func (c *Client) handle(resp *discoveryv3.DiscoveryResponse, send sender) error {
	return c.take(update{typ: resp.GetTypeUrl(), version: resp.GetVersionInfo(), nonce: resp.GetNonce(), resources: resp.GetResources()}, send)
}

// update is one response of either protocol: state of the world (all
// the type's resources) or delta (those that changed, and the names of
// those removed).
type update struct {
	typ, version, nonce string
	resources           []*anypb.Any
	delta               bool
	removed             []string
}

// take is handle for either protocol.
func (c *Client) take(u update, send sender) error {
	typ := u.typ
	resp := u // the response's version and nonce
	c.nonce[typ] = resp.nonce
	last := c.Status().Versions[typ]
	cand, err := c.candidate(typ, u.resources, u.delta, u.removed)
	if err == nil && Complete(&cand) {
		err = c.o.Apply(&cand)
		if errors.Is(err, ErrIncomplete) {
			err = nil
		} else if err == nil {
			c.st.update(func(s *Status) { s.Applied++ })
		}
	}
	if err != nil {
		c.o.Logger.Warn("xds: update refused (NACK); serving the last configuration", "type", typ, "version", resp.version, "err", err)
		c.st.update(func(s *Status) {
			s.Nacks++
			s.LastNack = &Nack{Type: typ, Version: resp.version, Error: err.Error(), At: time.Now()}
		})
		nonce := resp.nonce
		if v, ok := c.nacked[typ]; ok && v == resp.version && c.held != nil {
			n := c.nacks[typ]
			c.nacks[typ]++
			c.held(min(nackHoldMin<<min(n, 16), nackHoldMax), func() error { return send(typ, last, nonce, err) })
			return nil
		}
		c.nacked[typ], c.nacks[typ] = resp.version, 0
		return send(typ, last, nonce, err)
	}
	delete(c.nacked, typ)
	delete(c.nacks, typ)
	c.res = cand
	c.st.update(func(s *Status) {
		s.Acks++
		s.Versions[typ] = resp.version
		s.Waiting = !Complete(&cand)
	})
	if err := send(typ, resp.version, resp.nonce, nil); err != nil {
		return err
	}
	switch typ {
	case ListenerType:
		return c.follow(RouteType, RouteNames(cand.Listeners), send)
	case ClusterType:
		return c.follow(EndpointType, EndpointNames(cand.Clusters), send)
	}
	return nil
}

// follow subscribes to names of typ when they changed. An empty list
// would be a wildcard in the state-of-the-world protocol, so a type
// whose names all went away keeps its last subscription (its resources
// are then unused).
func (c *Client) follow(typ string, names []string, send sender) error {
	if len(names) == 0 || slices.Equal(names, c.sub[typ]) {
		return nil
	}
	c.sub[typ] = names
	if c.o.Delta { // a change of subscription, not an ACK
		return send(typ, "", "", nil)
	}
	return send(typ, c.Status().Versions[typ], c.nonce[typ], nil)
}

// candidate is the accepted resources with those of typ replaced by the
// response's (state of the world), or updated by them and without the
// removed ones (delta), each checked on its own.
func (c *Client) candidate(typ string, in []*anypb.Any, delta bool, removed []string) (Resources, error) {
	r := c.res
	if len(in) > maxResources {
		return r, errors.New("xds: more than " + strconv.Itoa(maxResources) + " resources in one response")
	}
	var err error
	switch typ {
	case ListenerType:
		r.Listeners, err = decode(base(delta, r.Listeners, removed), in, typ, func() *listenerv3.Listener { return &listenerv3.Listener{} },
			func(m *listenerv3.Listener) (string, error) { _, err := readListener(m); return m.GetName(), err })
	case RouteType:
		r.Routes, err = decode(base(delta, r.Routes, removed), in, typ, func() *routev3.RouteConfiguration { return &routev3.RouteConfiguration{} },
			func(m *routev3.RouteConfiguration) (string, error) {
				_, _, err := readRoutes(m)
				return m.GetName(), err
			})
	case ClusterType:
		r.Clusters, err = decode(base(delta, r.Clusters, removed), in, typ, func() *clusterv3.Cluster { return &clusterv3.Cluster{} },
			func(m *clusterv3.Cluster) (string, error) { _, err := readCluster(m); return m.GetName(), err })
	case EndpointType:
		r.Endpoints, err = decode(base(delta, r.Endpoints, removed), in, typ, func() *endpointv3.ClusterLoadAssignment { return &endpointv3.ClusterLoadAssignment{} },
			func(m *endpointv3.ClusterLoadAssignment) (string, error) {
				_, err := readEndpoints(m, "cluster_load_assignment", m.GetClusterName())
				return m.GetClusterName(), err
			})
	default:
		return r, ErrUnknownType
	}
	return r, err
}

// base is what a response's resources are added to: nothing (state of
// the world), or the accepted ones less the removed (delta).
func base[M any](delta bool, cur map[string]M, removed []string) map[string]M {
	if !delta {
		return nil
	}
	out := maps.Clone(cur)
	for _, n := range removed {
		delete(out, n)
	}
	return out
}

// decode unmarshals and checks each resource, keyed by name, into out
// (nil: a new map).
func decode[M proto.Message](out map[string]M, in []*anypb.Any, typ string, newM func() M, check func(M) (string, error)) (map[string]M, error) {
	if out == nil {
		out = make(map[string]M, len(in))
	}
	seen := make(map[string]bool, len(in))
	for i, a := range in {
		if a.GetTypeUrl() != typ {
			return nil, errors.New("xds: resource " + strconv.Itoa(i) + " is not of the response's type")
		}
		m := newM()
		if err := a.UnmarshalTo(m); err != nil {
			return nil, errors.New("xds: resource " + strconv.Itoa(i) + " does not decode")
		}
		name, err := check(m)
		if err != nil {
			return nil, err
		}
		if seen[name] {
			return nil, errors.New("xds: resource " + strconv.Itoa(i) + ": duplicate name " + safeName(name))
		}
		seen[name] = true
		out[name] = m
	}
	return out, nil
}

// nackStatus is a NACK's error_detail.
func nackStatus(err error) *statuspb.Status {
	return &statuspb.Status{Code: int32(codes.InvalidArgument), Message: err.Error()}
}
