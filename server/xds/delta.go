package xds

import (
	"context"
	"slices"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	statuspb "google.golang.org/genproto/googleapis/rpc/status"
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
	// subscribed are the names asked for on this stream, per type.
	subscribed := map[string][]string{}
	request := func(typ, _, nonce string, node *corev3.Node, detail *statuspb.Status) *discoveryv3.DeltaDiscoveryRequest {
		req := &discoveryv3.DeltaDiscoveryRequest{Node: node, TypeUrl: typ, ResponseNonce: nonce, ErrorDetail: detail}
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
		return req
	}
	take := func(resp *discoveryv3.DeltaDiscoveryResponse, send sender) error {
		in := make([]*anypb.Any, 0, len(resp.GetResources()))
		for _, r := range resp.GetResources() {
			in = append(in, r.GetResource())
		}
		return c.take(update{typ: resp.GetTypeUrl(), version: resp.GetSystemVersionInfo(), nonce: resp.GetNonce(),
			resources: in, delta: true, removed: resp.GetRemovedResources()}, send)
	}
	return session(ctx, c, "xds: connected (delta)", ads.DeltaAggregatedResources, request, take)
}
