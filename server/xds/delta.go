package xds

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/protobuf/types/known/anypb"
)

// streamDelta is stream for the incremental protocol: responses carry
// the resources that changed and the names of those removed; an ACK is
// the response's nonce; subscriptions to route configurations and
// assignments change by the names added and dropped. A new stream starts
// from nothing (no initial_resource_versions): the server sends every
// resource again, and an unchanged translation is not applied again
// (the program's Apply compares it with the last).
func (c *Client) streamDelta(ctx context.Context, ads discoveryv3.AggregatedDiscoveryServiceClient) (delivered bool, err error) {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s, err := ads.DeltaAggregatedResources(sctx)
	if err != nil {
		return false, errors.Join(errStream, err)
	}
	node := &corev3.Node{Id: c.o.NodeID, Cluster: c.o.Cluster, UserAgentName: "simdedge"}
	first := true
	// subscribed are the names asked for on this stream, per type.
	subscribed := map[string][]string{}
	var mu sync.Mutex
	send := func(typ, _ string, nonce string, detail error) error {
		mu.Lock()
		defer mu.Unlock()
		req := &discoveryv3.DeltaDiscoveryRequest{TypeUrl: typ, ResponseNonce: nonce}
		if first {
			req.Node, first = node, false
		}
		if detail != nil {
			req.ErrorDetail = nackStatus(detail)
		}
		want, had := c.sub[typ], subscribed[typ]
		for _, n := range want {
			if !slices.Contains(had, n) {
				req.ResourceNamesSubscribe = append(req.ResourceNamesSubscribe, n)
			}
		}
		for _, n := range had {
			if !slices.Contains(want, n) {
				req.ResourceNamesUnsubscribe = append(req.ResourceNamesUnsubscribe, n)
			}
		}
		subscribed[typ] = slices.Clone(want)
		return s.Send(req)
	}
	c.held = func(d time.Duration, req func() error) {
		go func() {
			t := time.NewTimer(d)
			defer t.Stop()
			select {
			case <-sctx.Done():
			case <-t.C:
				if req() != nil {
					cancel()
				}
			}
		}()
	}
	// Listeners and clusters: wildcard (no names); route configurations
	// and assignments by the names followed so far.
	for _, typ := range []string{ClusterType, EndpointType, ListenerType, RouteType} {
		if (typ == EndpointType || typ == RouteType) && len(c.sub[typ]) == 0 {
			continue
		}
		if err := send(typ, "", "", nil); err != nil {
			return false, errors.Join(errStream, err)
		}
	}
	for {
		resp, err := s.Recv()
		if err != nil {
			return delivered, errors.Join(errStream, err)
		}
		if !delivered {
			delivered = true
			c.st.update(func(s *Status) { s.Connected = true })
			c.o.Logger.Info("xds: connected (delta)", "server", c.o.Server)
		}
		in := make([]*anypb.Any, 0, len(resp.GetResources()))
		for _, r := range resp.GetResources() {
			in = append(in, r.GetResource())
		}
		u := update{typ: resp.GetTypeUrl(), version: resp.GetSystemVersionInfo(), nonce: resp.GetNonce(),
			resources: in, delta: true, removed: resp.GetRemovedResources()}
		if err := c.take(u, send); err != nil {
			return delivered, errors.Join(errStream, err)
		}
	}
}
