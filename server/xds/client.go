package xds

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"math/rand/v2"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	statuspb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/keepalive"
)

// Defaults of Options.
const (
	DefaultBackoffMin = 100 * time.Millisecond
	DefaultBackoffMax = 10 * time.Second
	// keepaliveTime: a control plane that vanished without a FIN (a
	// dead host, a dropped route) is noticed within this plus
	// keepaliveTimeout, and the client reconnects. Not shorter: a gRPC
	// server's default enforcement (grpc-go's MinTime) answers pings
	// more frequent than every 5 minutes with GOAWAY too_many_pings,
	// which would break the stream over and over.
	keepaliveTime    = 5 * time.Minute
	keepaliveTimeout = 20 * time.Second
	// maxResponse bounds one discovery response (gRPC's receive limit).
	maxResponse = 64 << 20
	// nackHoldMin and nackHoldMax bound the delay of a repeated NACK.
	nackHoldMin = 250 * time.Millisecond
	nackHoldMax = 30 * time.Second
)

// Options configure a Client.
type Options struct {
	// Server is the ADS server's host:port.
	Server string
	// NodeID and Cluster identify this edge to the control plane.
	NodeID, Cluster string
	// TLS, if set, secures the stream; nil: plaintext (loopback, or a
	// sidecar's).
	TLS *tls.Config
	// Apply is called with a complete set of resources (every route
	// configuration the listeners name and every assignment the EDS
	// clusters name): it translates and applies them and returns an
	// error to refuse them, which NACKs the response that brought them.
	// It is called from the client's goroutine, one call at a time.
	Apply func(r *Resources) error
	// Delta follows the server with the incremental protocol
	// (DeltaAggregatedResources) instead of the state of the world.
	Delta bool
	// BackoffMin and BackoffMax bound the wait before a reconnection:
	// full jitter over an exponential, reset once a stream delivers.
	BackoffMin, BackoffMax time.Duration
	Logger                 *slog.Logger
}

// Client follows one ADS server. Its zero value is not usable: New.
type Client struct {
	o  Options
	st status
	// res are the resources last accepted, by type.
	res Resources
	// sub are the names subscribed for RDS and EDS (LDS and CDS are
	// wildcard subscriptions).
	sub map[string][]string
	// nonce is the last response nonce per type, sent back with every
	// request of that type.
	nonce map[string]string
	// nacked is the version last NACKed per type, and nacks how many
	// times in a row: a control plane that sends the same refused
	// version again at once (go-control-plane's cache answers a NACK,
	// which carries the older version, with the newer) gets its NACK
	// after a growing delay (nackHold), not in a busy loop.
	nacked map[string]string
	nacks  map[string]int
	// held sends a request after a delay, on the current stream.
	held func(d time.Duration, req func() error)
}

// New returns a Client; Run starts it.
func New(o Options) *Client {
	if o.BackoffMin <= 0 {
		o.BackoffMin = DefaultBackoffMin
	}
	if o.BackoffMax < o.BackoffMin {
		o.BackoffMax = max(DefaultBackoffMax, o.BackoffMin)
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	c := &Client{o: o, sub: map[string][]string{}, nonce: map[string]string{}, nacked: map[string]string{}, nacks: map[string]int{}}
	c.st.s = Status{Server: o.Server, Versions: map[string]string{}}
	return c
}

// Status returns the client's state.
func (c *Client) Status() Status { return c.st.get() }

// Run follows the server until ctx ends, reconnecting with backoff and
// jitter whenever the stream breaks. The configuration last applied
// stays in force meanwhile.
func (c *Client) Run(ctx context.Context) {
	creds := insecure.NewCredentials()
	if c.o.TLS != nil {
		creds = credentials.NewTLS(c.o.TLS)
	}
	conn, err := grpc.NewClient(c.o.Server,
		grpc.WithTransportCredentials(creds),
		grpc.WithKeepaliveParams(keepalive.ClientParameters{Time: keepaliveTime, Timeout: keepaliveTimeout}),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxResponse)))
	if err != nil {
		// Only a malformed target gets here; config checks host:port.
		c.o.Logger.Error("xds: cannot create the client", "err", err)
		return
	}
	defer conn.Close()
	ads := discoveryv3.NewAggregatedDiscoveryServiceClient(conn)
	fails := 0
	for ctx.Err() == nil {
		run := c.stream
		if c.o.Delta {
			run = c.streamDelta
		}
		delivered, err := run(ctx, ads)
		c.st.update(func(s *Status) { s.Connected = false })
		if ctx.Err() != nil {
			return
		}
		if delivered {
			fails = 0
		}
		wait := c.backoff(fails)
		fails++
		c.o.Logger.Warn("xds: stream ended; serving the last configuration and reconnecting", "server", c.o.Server, "err", err, "in", wait.Round(time.Millisecond).String())
		c.st.update(func(s *Status) { s.Reconnects++ })
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// backoff is full jitter over min·2^fails, capped at max.
func (c *Client) backoff(fails int) time.Duration {
	ceil := c.o.BackoffMin << min(fails, 20)
	if ceil <= 0 || ceil > c.o.BackoffMax {
		ceil = c.o.BackoffMax
	}
	return c.o.BackoffMin/2 + rand.N(ceil)
}

// errStream wraps a stream's failure.
var errStream = errors.New("xds: stream failed")

// stream runs one state-of-the-world ADS stream: every request names
// all the resources followed of its type, with the version it has.
func (c *Client) stream(ctx context.Context, ads discoveryv3.AggregatedDiscoveryServiceClient) (delivered bool, err error) {
	request := func(typ, version, nonce string, node *corev3.Node, detail *statuspb.Status) *discoveryv3.DiscoveryRequest {
		return &discoveryv3.DiscoveryRequest{Node: node, TypeUrl: typ, VersionInfo: version, ResourceNames: c.sub[typ], ResponseNonce: nonce, ErrorDetail: detail}
	}
	return session(ctx, c, "xds: connected", ads.StreamAggregatedResources, request, c.handle)
}
