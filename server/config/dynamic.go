package config

import (
	"net"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Dynamic is configuration that arrives at run time from a control
// plane instead of the file:
//
//	dynamic:
//	  xds:
//	    server: "127.0.0.1:18000"   # the ADS server (gRPC)
//	    node_id: edge-1             # Node.id the control plane keys its snapshot on
//	    cluster: edge               # Node.cluster
//	    tls: {ca: cp-ca.pem, server_name: cp.internal}   # optional; see UpstreamTLS
//	    initial_fetch_timeout: 15s  # how long a start waits for the first complete config
//	    delta: false                # true: incremental xDS instead of the state of the world
//
// A file may hold only dynamic (listeners, routes and upstreams then all
// come from xDS) or combine it with static listeners, routes and
// upstreams: static routes come first (the first route that matches a
// request wins, so a static route wins over an xDS one it overlaps), and
// an xDS listener, cluster or route name that clashes with a static one
// is refused (NACKed). The program serves it only when built with
// `-tags fleet` (server/xds, docs/xds.md).
type Dynamic struct {
	XDS *XDS `yaml:"xds,omitempty"`
}

// XDS is dynamic.xds: the aggregated discovery service to follow.
type XDS struct {
	Server  string       `yaml:"server"`
	NodeID  string       `yaml:"node_id"`
	Cluster string       `yaml:"cluster,omitempty"`
	TLS     *UpstreamTLS `yaml:"tls,omitempty"`
	// InitialFetchTimeout: at start, how long to wait for the first
	// complete configuration before serving the static part alone
	// (Envoy's initial_fetch_timeout). A file without static routes
	// waits on. Default DefaultXDSInitialFetch.
	InitialFetchTimeout Duration `yaml:"initial_fetch_timeout,omitempty"`
	// Delta: the incremental protocol (DeltaAggregatedResources) instead
	// of the state of the world.
	Delta bool `yaml:"delta,omitempty"`
}

// DefaultXDSInitialFetch is dynamic.xds.initial_fetch_timeout's default,
// Envoy's.
const DefaultXDSInitialFetch = Duration(15e9)

func (d *decoder) dynamic(v *yaml.Node, key string, c *Config) {
	c.Dynamic = &Dynamic{}
	d.fields(v, key, map[string]func(*yaml.Node, string){
		"xds": func(v *yaml.Node, key string) {
			x := &XDS{}
			c.Dynamic.XDS = x
			d.fields(v, key, map[string]func(*yaml.Node, string){
				"server": func(v *yaml.Node, key string) {
					d.str(&x.Server)(v, key)
					if h, p, err := net.SplitHostPort(x.Server); x.Server != "" && (err != nil || h == "" || p == "" || p == "0") {
						d.fail(v, key, `must be "host:port"`)
					}
				},
				"node_id": d.str(&x.NodeID),
				"cluster": d.str(&x.Cluster),
				"tls":     d.upstreamTLS(&x.TLS),

				"initial_fetch_timeout": d.duration(&x.InitialFetchTimeout),
				"delta":                 d.flag(&x.Delta),
			})
			if x.Server == "" {
				d.fail(v, key+".server", "missing")
			}
			if strings.TrimSpace(x.NodeID) == "" {
				d.fail(v, key+".node_id", "missing")
			}
		},
	})
	if c.Dynamic.XDS == nil {
		d.fail(v, key, "needs xds")
	}
}

// XDS returns the xDS source the configuration names, nil if none.
func (c *Config) XDS() *XDS {
	if c.Dynamic == nil {
		return nil
	}
	return c.Dynamic.XDS
}

// withDefaults fills the defaults of dynamic.xds.
func (x *XDS) withDefaults() *XDS {
	if x == nil {
		return nil
	}
	e := *x
	if e.InitialFetchTimeout == 0 {
		e.InitialFetchTimeout = DefaultXDSInitialFetch
	}
	return &e
}

// ClientTLS is the TLS configuration for the control plane's connection
// (nil: plain gRPC).
func (x *XDS) ClientTLS() *UpstreamTLS { return x.TLS }
