package main

import (
	"testing"

	"github.com/simdedge/simdedge/rdma"
	"github.com/simdedge/simdedge/server/config"
	"github.com/simdedge/simdedge/xdp"
)

// TestListenerDefaultsMirror: server/config may not import the transports
// (layers), so it mirrors their defaults to print the effective
// configuration; this is where both are visible, so it checks they agree.
func TestListenerDefaultsMirror(t *testing.T) {
	eff := (&config.Config{Listeners: []config.Listener{
		{Transport: config.TransportXDP, XDP: &config.XDP{}},
		{Transport: config.TransportRDMA, Address: "127.0.0.1:7471"},
	}}).EffectiveListeners()
	x, r := eff[0].XDP, eff[1].RDMA
	if x.Mode != string(xdp.Native) || x.RingSize != xdp.DefaultRingSize || x.FrameSize != xdp.DefaultFrameSize ||
		x.Frames != 2*xdp.DefaultRingSize || len(x.Queues) != 1 || x.Queues[0] != 0 {
		t.Errorf("config's xdp defaults %+v differ from package xdp's", *x)
	}
	if r.Provider != rdma.DefaultProvider || r.Credits != rdma.DefaultCredits || r.MessageSize != rdma.DefaultMessageSize {
		t.Errorf("config's rdma defaults %+v differ from package rdma's", *r)
	}
}
