package xds

import (
	"context"
	"errors"
	"sync"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	statuspb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc"
)

// session is one stream of either protocol (state of the world or
// delta), from its opening until it breaks; delivered says whether it
// received a response (which resets the backoff). The protocols differ
// only in how a request is built (request, called one at a time, with
// the node on the stream's first request and the NACK's detail) and how
// a response is taken (take); the rest is here once.
func session[Req, Res any](ctx context.Context, c *Client, connected string,
	open func(context.Context, ...grpc.CallOption) (grpc.BidiStreamingClient[Req, Res], error),
	request func(typ, version, nonce string, node *corev3.Node, detail *statuspb.Status) *Req,
	take func(resp *Res, send sender) error) (delivered bool, err error) {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s, err := open(sctx)
	if err != nil {
		return false, errors.Join(errStream, err)
	}
	node := &corev3.Node{Id: c.o.NodeID, Cluster: c.o.Cluster, UserAgentName: "simdedge"}
	// Sends come from this goroutine and from held NACKs (handle.go):
	// gRPC allows one sender at a time.
	var mu sync.Mutex
	send := func(typ, version, nonce string, detail error) error {
		mu.Lock()
		defer mu.Unlock()
		var d *statuspb.Status
		if detail != nil {
			d = nackStatus(detail)
		}
		req := request(typ, version, nonce, node, d)
		node = nil // only the stream's first request carries it
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
	// A new stream asks again for everything it follows: listeners and
	// clusters by wildcard, route configurations and assignments by the
	// names followed so far, each with the version it has (which the
	// delta protocol does not send).
	versions := c.Status().Versions
	for _, typ := range []string{ClusterType, EndpointType, ListenerType, RouteType} {
		if (typ == EndpointType || typ == RouteType) && len(c.sub[typ]) == 0 {
			continue
		}
		if err := send(typ, versions[typ], "", nil); err != nil {
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
			c.o.Logger.Info(connected, "server", c.o.Server)
		}
		if err := take(resp, send); err != nil {
			return delivered, errors.Join(errStream, err)
		}
	}
}
