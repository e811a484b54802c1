//go:build fleet

package rls

import (
	"context"
	"net"
	"sync"
	"time"

	rlcommon "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"github.com/simdedge/simdedge/server/rewrite"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// Enabled reports whether this binary has the client (-tags fleet).
const Enabled = true

// Client asks a rate-limit service; it is safe for concurrent use.
type Client struct {
	o   Options
	svc rlsv3.RateLimitServiceClient
}

// conns share one gRPC connection per service address across every
// route and every rebuild (a reload, a discovery change): a rebuild makes
// new routes, and a connection per route would be dialed and dropped
// each time. Their number is bounded by the addresses configured over
// the process's life.
var conns sync.Map // address -> *grpc.ClientConn

func dial(address string) (*grpc.ClientConn, error) {
	if c, ok := conns.Load(address); ok {
		return c.(*grpc.ClientConn), nil
	}
	c, err := grpc.NewClient("passthrough:///"+address, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, err
	}
	if old, loaded := conns.LoadOrStore(address, c); loaded {
		c.Close()
		return old.(*grpc.ClientConn), nil
	}
	return c, nil
}

// New returns a client for o. It does not wait for the service: the
// connection is made in the background, and calls before it is up follow
// the failure mode.
func New(o Options) (*Client, error) {
	o = o.withDefaults()
	if _, _, err := net.SplitHostPort(o.Address); err != nil {
		return nil, ErrAddress
	}
	if err := o.check(); err != nil {
		return nil, err
	}
	cc, err := dial(o.Address)
	if err != nil {
		return nil, ErrAddress
	}
	return &Client{o: o, svc: rlsv3.NewRateLimitServiceClient(cc)}, nil
}

// Limit asks the service about one request (router.GlobalLimiter): 0
// admits, StatusOverLimit with the time until the limit resets, or
// StatusOnError under FailDeny when the service failed or timed out.
func (c *Client) Limit(env *rewrite.Env) (int, time.Duration) {
	vals := Expand(c.o.Descriptors, env)
	if len(vals) == 0 {
		return 0, 0
	}
	req := &rlsv3.RateLimitRequest{Domain: c.o.Domain, HitsAddend: 1}
	for _, d := range vals {
		pd := &rlcommon.RateLimitDescriptor{}
		for _, v := range d {
			pd.Entries = append(pd.Entries, &rlcommon.RateLimitDescriptor_Entry{Key: v.Key, Value: v.Value})
		}
		req.Descriptors = append(req.Descriptors, pd)
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.o.Timeout)
	defer cancel()
	resp, err := c.svc.ShouldRateLimit(ctx, req)
	if err != nil || resp.GetOverallCode() == rlsv3.RateLimitResponse_UNKNOWN {
		return c.failed(err)
	}
	if resp.GetOverallCode() != rlsv3.RateLimitResponse_OVER_LIMIT {
		return 0, 0
	}
	var wait time.Duration
	for _, st := range resp.GetStatuses() {
		if st.GetCode() == rlsv3.RateLimitResponse_OVER_LIMIT {
			wait = max(wait, st.GetDurationUntilReset().AsDuration())
		}
	}
	return StatusOverLimit, wait
}

// failed applies the failure mode.
func (c *Client) failed(err error) (int, time.Duration) {
	c.o.Logger.Debug("rate limit service failed", "address", c.o.Address, "failure_mode", string(c.o.FailureMode), "err", err)
	if c.o.FailureMode == FailDeny {
		return StatusOnError, 0
	}
	return 0, 0
}
