package xds

import (
	"fmt"
	"testing"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"github.com/simdedge/simdedge/server/config"
	"google.golang.org/protobuf/proto"
)

// fleetResources is a larger edge's configuration: routes prefixes over
// clusters clusters of endpoints endpoints each (the figures of
// docs/decisions/0044).
func fleetResources(routes, clusters, endpoints int) *Resources {
	r := &Resources{
		Listeners: map[string]*listenerv3.Listener{"edge": testListener("edge", "127.0.0.1", 18080, "local")},
		Routes:    map[string]*routev3.RouteConfiguration{},
		Clusters:  map[string]*clusterv3.Cluster{},
		Endpoints: map[string]*endpointv3.ClusterLoadAssignment{},
	}
	rc := &routev3.RouteConfiguration{Name: "local", VirtualHosts: []*routev3.VirtualHost{{Name: "any", Domains: []string{"*"}}}}
	for i := range routes {
		c := fmt.Sprintf("c%d", i%clusters)
		rc.VirtualHosts[0].Routes = append(rc.VirtualHosts[0].Routes, &routev3.Route{Name: fmt.Sprintf("r%d", i),
			Match: prefix(fmt.Sprintf("/svc%d/", i)), Action: proxyTo(c)})
	}
	r.Routes["local"] = rc
	for i := range clusters {
		c := fmt.Sprintf("c%d", i)
		r.Clusters[c] = testCluster(c)
		var eps []ep
		for j := range endpoints {
			eps = append(eps, ep{host: fmt.Sprintf("10.%d.%d.%d", i/256, i%256, j+1), port: 8080})
		}
		r.Endpoints[c] = testAssignment(c, eps...)
	}
	return r
}

// BenchmarkUpdate is what an edge spends on one update of a larger
// configuration: translate, merge with the file and parse (Merge), and
// build the routing table and pools (Build); the sizes of the resources
// on the wire are reported as metrics.
func BenchmarkUpdate(b *testing.B) {
	for _, sz := range []struct{ routes, clusters, endpoints int }{{100, 20, 10}, {1000, 200, 10}} {
		r := fleetResources(sz.routes, sz.clusters, sz.endpoints)
		wire := 0
		for _, m := range r.Clusters {
			wire += proto.Size(m)
		}
		for _, m := range r.Endpoints {
			wire += proto.Size(m)
		}
		wire += proto.Size(r.Routes["local"]) + proto.Size(r.Listeners["edge"])
		static, err := config.Parse([]byte(dynamicOnly))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("routes=%d/clusters=%d/endpoints=%d", sz.routes, sz.clusters, sz.endpoints), func(b *testing.B) {
			b.ReportAllocs()
			b.ReportMetric(float64(wire), "wire-bytes")
			b.ReportMetric(float64(proto.Size(r.Endpoints["c0"])), "eds-bytes/cluster")
			for b.Loop() {
				c, err := merged(r, dynamicOnly, static)
				if err != nil {
					b.Fatal(err)
				}
				s, err := c.Build(config.BuildOptions{})
				if err != nil {
					b.Fatal(err)
				}
				s.Close()
			}
		})
	}
}

// BenchmarkEndpointUpdate is an update of endpoints alone as the fleet
// build applies it: translate, then new targets on the running
// configuration (config.WithTargets) and new upstreams under the same
// routing table (Snapshot.Rebind), with no document parsed.
func BenchmarkEndpointUpdate(b *testing.B) {
	for _, sz := range []struct{ routes, clusters, endpoints int }{{100, 20, 10}, {1000, 200, 10}} {
		r := fleetResources(sz.routes, sz.clusters, sz.endpoints)
		static, err := config.Parse([]byte(dynamicOnly))
		if err != nil {
			b.Fatal(err)
		}
		c, err := merged(r, dynamicOnly, static)
		if err != nil {
			b.Fatal(err)
		}
		snap, err := c.Build(config.BuildOptions{Swappable: true})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("routes=%d/clusters=%d/endpoints=%d", sz.routes, sz.clusters, sz.endpoints), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				f, err := Translate(r)
				if err != nil {
					b.Fatal(err)
				}
				m := map[string]config.TargetUpdate{}
				for _, u := range f.Upstreams {
					ts := make([]config.Target, len(u.Targets))
					for i, t := range u.Targets {
						ts[i] = config.Target{Address: t.Address, Weight: t.Weight}
					}
					m[u.Name] = config.TargetUpdate{Targets: ts, MaxConnsPerTarget: u.MaxConnsPerTarget}
				}
				nc, err := c.WithTargets(m)
				if err != nil {
					b.Fatal(err)
				}
				n, err := snap.Rebind(nc, config.BuildOptions{Previous: snap, Swappable: true})
				if err != nil {
					b.Fatal(err)
				}
				n.Close()
			}
		})
		snap.Close()
	}
}
