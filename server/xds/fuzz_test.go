package xds

import (
	"testing"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"github.com/simdedge/simdedge/server/config"
	"google.golang.org/protobuf/proto"
)

// FuzzTranslate feeds marshalled resources, as a control plane would
// send them, through Translate and Merge: a refusal is an error, never a
// panic or a hang. which picks the resource the bytes replace.
func FuzzTranslate(f *testing.F) {
	r := testResources()
	add := func(which byte, m proto.Message) {
		b, _ := proto.Marshal(m)
		f.Add(which, b)
	}
	add(0, r.Listeners["edge"])
	add(1, r.Routes["local"])
	add(2, r.Clusters["backend"])
	add(3, r.Endpoints["backend"])
	static := mustStaticF(f)
	f.Fuzz(func(t *testing.T, which byte, b []byte) {
		r := testResources()
		var err error
		switch which % 4 {
		case 0:
			m := &listenerv3.Listener{}
			err = proto.Unmarshal(b, m)
			r.Listeners["edge"] = m
		case 1:
			m := &routev3.RouteConfiguration{}
			err = proto.Unmarshal(b, m)
			r.Routes["local"] = m
		case 2:
			m := &clusterv3.Cluster{}
			err = proto.Unmarshal(b, m)
			r.Clusters["backend"] = m
		case 3:
			m := &endpointv3.ClusterLoadAssignment{}
			err = proto.Unmarshal(b, m)
			r.Endpoints["backend"] = m
		}
		if err != nil {
			return
		}
		Complete(r)
		fr, err := Translate(r)
		if err != nil {
			return
		}
		_, _ = Merge([]byte(dynamicOnly), static, fr)
	})
}

func mustStaticF(f *testing.F) *config.Config {
	c, err := config.Parse([]byte(dynamicOnly))
	if err != nil {
		f.Fatal(err)
	}
	return c
}
