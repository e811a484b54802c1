package proxy

import (
	"sync/atomic"

	"github.com/simdedge/simdedge/server"
)

// Slot is a Proxy that can be replaced under a route while it serves: the
// seam through which an update of an upstream's targets alone (xDS EDS)
// reaches the routes that proxy to it without a new routing table. Each
// request loads the Proxy once and runs on it to its end, on every engine
// and proxy path, so a swap never mixes two upstreams in one exchange.
type Slot struct {
	p atomic.Pointer[Proxy]
}

// NewSlot returns a Slot holding p.
func NewSlot(p *Proxy) *Slot {
	s := &Slot{}
	s.p.Store(p)
	return s
}

// Store makes p serve the requests that arrive from now on.
func (s *Slot) Store(p *Proxy) { s.p.Store(p) }

// Proxy is the Proxy in the slot.
func (s *Slot) Proxy() *Proxy { return s.p.Load() }

// ServeEdge implements server.Handler.
func (s *Slot) ServeEdge(w *server.ResponseWriter, r *server.Request) { s.p.Load().ServeEdge(w, r) }

// LoopProxy implements server.LoopProxier: the LoopUpstream it returns is
// one Proxy's, which the loop keeps for the whole exchange.
func (s *Slot) LoopProxy(r *server.Request) server.LoopUpstream { return s.p.Load().LoopProxy(r) }

var (
	_ server.Handler     = (*Slot)(nil)
	_ server.LoopProxier = (*Slot)(nil)
)

// Upstream is the upstream p forwards to.
func (p *Proxy) Upstream() *Upstream { return p.up }
