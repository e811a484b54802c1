package fleettest

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"

	discoverygrpc "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	cachetypes "github.com/envoyproxy/go-control-plane/pkg/cache/types"
	cachev3 "github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	serverv3 "github.com/envoyproxy/go-control-plane/pkg/server/v3"
	"google.golang.org/grpc"
)

// controlPlane is go-control-plane's ADS server over a snapshot cache,
// on a loopback address that a restart keeps.
type controlPlane struct {
	addr  string
	cache cachev3.SnapshotCache
	srv   *grpc.Server
	done  chan struct{}

	mu    sync.Mutex
	nacks map[string][]string // node ID -> NACK messages
}

func startControlPlane(t *testing.T, addr string, opts ...grpc.ServerOption) *controlPlane {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	cp := &controlPlane{addr: ln.Addr().String(), cache: cachev3.NewSnapshotCache(true, cachev3.IDHash{}, nil),
		done: make(chan struct{}), nacks: map[string][]string{}}
	// The node is on a stream's first request only: streams are mapped
	// to nodes as they open.
	nodes := map[int64]string{}
	record := func(id int64, node, msg string) {
		cp.mu.Lock()
		defer cp.mu.Unlock()
		if node != "" {
			nodes[id] = node
		}
		if msg != "" {
			cp.nacks[nodes[id]] = append(cp.nacks[nodes[id]], msg)
		}
	}
	cb := serverv3.CallbackFuncs{
		StreamRequestFunc: func(id int64, req *discoverygrpc.DiscoveryRequest) error {
			record(id, req.GetNode().GetId(), req.GetErrorDetail().GetMessage())
			return nil
		},
		StreamDeltaRequestFunc: func(id int64, req *discoverygrpc.DeltaDiscoveryRequest) error {
			record(id, req.GetNode().GetId(), req.GetErrorDetail().GetMessage())
			return nil
		},
	}
	ctx, cancel := context.WithCancel(context.Background())
	cp.srv = grpc.NewServer(opts...)
	discoverygrpc.RegisterAggregatedDiscoveryServiceServer(cp.srv, serverv3.NewServer(ctx, cp.cache, cb))
	go func() {
		defer close(cp.done)
		cp.srv.Serve(ln)
	}()
	t.Cleanup(func() { cp.stop(); cancel() })
	return cp
}

// stop ends the server and every stream (the edges see it go).
func (cp *controlPlane) stop() {
	cp.srv.Stop()
	<-cp.done
}

// nacked returns the NACK messages node sent that contain s.
func (cp *controlPlane) nacked(node, s string) int {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	n := 0
	for _, m := range cp.nacks[node] {
		if strings.Contains(m, s) {
			n++
		}
	}
	return n
}

// state is what the control plane serves, with a version per type so
// that a change of endpoints sends EDS alone.
type state struct {
	versions  [4]string // listener, route, cluster, endpoint
	listeners func(node string) []cachetypes.Resource
	routes    []cachetypes.Resource
	clusters  []cachetypes.Resource
	endpoints []cachetypes.Resource
}

// set publishes s to every node.
func (cp *controlPlane) set(t *testing.T, s *state, nodes []string) {
	t.Helper()
	for _, n := range nodes {
		snap := &cachev3.Snapshot{}
		snap.Resources[cachetypes.Listener] = cachev3.NewResources(s.versions[0], s.listeners(n))
		snap.Resources[cachetypes.Route] = cachev3.NewResources(s.versions[1], s.routes)
		snap.Resources[cachetypes.Cluster] = cachev3.NewResources(s.versions[2], s.clusters)
		snap.Resources[cachetypes.Endpoint] = cachev3.NewResources(s.versions[3], s.endpoints)
		if err := snap.Consistent(); err != nil {
			t.Fatalf("inconsistent snapshot: %v", err)
		}
		if err := cp.cache.SetSnapshot(context.Background(), n, snap); err != nil {
			t.Fatal(err)
		}
	}
}
