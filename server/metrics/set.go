package metrics

import (
	"sort"
	"sync"
	"sync/atomic"
)

// shardsPerCPU: with two shards per CPU, connections handed out in turn
// rarely land on the shard of another busy connection on another CPU.
const shardsPerCPU = 2

// Set is the counters of one server: its routes and its listeners.
type Set struct {
	mask int // shards-1; the shard count is a power of two
	next atomic.Uint32

	mu        sync.Mutex
	routes    map[string]*Route
	listeners map[string]*Listener
	// unmatched counts requests no route took (404s, OPTIONS *).
	unmatched *Route
	// slotNames are the listener label values of the per-listener
	// request slots (ListenerSlots); the last slot is OtherListeners.
	slotNames [ListenerSlots]string
	// reloads is the last configuration load's outcome (reload.go).
	reloads Reloads
}

// ListenerSlots bounds the listener dimension of the routes' request
// counters: the first ListenerSlots-1 listeners get their own slot, the
// rest share the last one (labelled OtherListeners). Most configurations
// have one to three listeners (http, https, an internal port); a bound
// keeps a route's counter block fixed in size (no map per request).
const ListenerSlots = 4 // a power of two: ObserveAt masks the slot

// OtherListeners labels the requests of listeners beyond the first
// ListenerSlots-1.
const OtherListeners = "(other)"

// SlotName is the listener label of request slot i ("" for a slot no
// listener has taken yet).
func (s *Set) SlotName(i int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i == ListenerSlots-1 && len(s.listeners) >= ListenerSlots {
		return OtherListeners
	}
	return s.slotNames[i]
}

// Shard is Set.Shard on a nil Set too (0).
func ShardOf(s *Set) int {
	if s == nil {
		return 0
	}
	return s.Shard()
}

// UnmatchedRoute is the route label of requests that no route matched.
const UnmatchedRoute = "(none)"

// NewSet returns an empty Set sized for the machine's CPUs.
func NewSet() *Set {
	n := shardCount()
	s := &Set{mask: n - 1, routes: map[string]*Route{}, listeners: map[string]*Listener{}}
	s.unmatched = s.Route(UnmatchedRoute)
	return s
}

// Unmatched returns the counters of requests no route matched.
func (s *Set) Unmatched() *Route { return s.unmatched }

// Shard hands out a shard index for a new connection (or an event loop),
// in turn. Called once per connection, not per request.
func (s *Set) Shard() int { return int(s.next.Add(1)) & s.mask }

// Route returns the counters of the route named name, creating them on
// first use: a reload that keeps a route's name keeps its counts. Called
// when a routing table is built, never per request.
func (s *Set) Route(name string) *Route {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.routes[name]
	if r == nil {
		r = &Route{name: name, shards: make([]routeShard, s.mask+1)}
		s.routes[name] = r
	}
	return r
}

// Routes returns the routes counted so far, in name order.
func (s *Set) Routes() []*Route {
	s.mu.Lock()
	out := make([]*Route, 0, len(s.routes))
	for _, r := range s.routes {
		out = append(out, r)
	}
	s.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}
