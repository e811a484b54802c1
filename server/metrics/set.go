package metrics

import (
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
)

// shardsPerCPU: with two shards per CPU, connections handed out in turn
// rarely land on the shard of another busy connection on another CPU.
const shardsPerCPU = 2

// Refusal reasons: why a connection was closed unserved.
const (
	RefusedPerIP    = iota // over limits.max_conns_per_ip
	RefusedMaxConns        // no slot under limits.max_conns
	RefusalKinds
)

// RefusalNames are the label values of the refusal reasons.
var RefusalNames = [RefusalKinds]string{"per_ip", "max_conns"}

// connCounters is one shard of the server-wide counters.
type connCounters struct {
	opened, closed atomic.Uint64
	refused        [RefusalKinds]atomic.Uint64
	parseErrors    [ParseKinds]atomic.Uint64
}

type connShard struct {
	connCounters
	_ [cacheLine - connCountersSize%cacheLine]byte
}

const connCountersSize = 8 * (2 + RefusalKinds + ParseKinds)

// Set is the counters of one server: its routes and its connections.
type Set struct {
	mask  int // shards-1; the shard count is a power of two
	next  atomic.Uint32
	conns []connShard

	mu     sync.Mutex
	routes map[string]*Route
	// unmatched counts requests no route took (404s, OPTIONS *).
	unmatched *Route
}

// UnmatchedRoute is the route label of requests that no route matched.
const UnmatchedRoute = "(none)"

// NewSet returns an empty Set sized for the machine's CPUs.
func NewSet() *Set {
	n := 1
	for n < shardsPerCPU*runtime.GOMAXPROCS(0) {
		n *= 2
	}
	s := &Set{mask: n - 1, conns: make([]connShard, n), routes: map[string]*Route{}}
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

// The connection hooks below accept a nil Set (metrics off).

// Opened counts an accepted connection.
func (s *Set) Opened(shard int) {
	if s != nil {
		s.conns[shard&s.mask].opened.Add(1)
	}
}

// Closed counts a connection's end.
func (s *Set) Closed(shard int) {
	if s != nil {
		s.conns[shard&s.mask].closed.Add(1)
	}
}

// Refused counts a connection closed unserved for reason (RefusedPerIP...).
func (s *Set) Refused(shard, reason int) {
	if s != nil {
		s.conns[shard&s.mask].refused[reason].Add(1)
	}
}

// ParseError counts a request answered with status before any handler
// ran (malformed, too large, unsupported).
func (s *Set) ParseError(shard, status int) {
	if s != nil {
		s.conns[shard&s.mask].parseErrors[ParseStatusIndex(status)].Add(1)
	}
}

// ConnTotals are the server-wide counters summed over the shards.
type ConnTotals struct {
	Opened, Closed uint64
	Refused        [RefusalKinds]uint64
	ParseErrors    [ParseKinds]uint64
}

// Active is the number of open connections.
func (t ConnTotals) Active() uint64 {
	if t.Closed > t.Opened { // shards read at different instants
		return 0
	}
	return t.Opened - t.Closed
}

// Conns sums the server-wide counters.
func (s *Set) Conns() ConnTotals {
	var t ConnTotals
	for i := range s.conns {
		c := &s.conns[i]
		t.Opened += c.opened.Load()
		t.Closed += c.closed.Load()
		for k := range c.refused {
			t.Refused[k] += c.refused[k].Load()
		}
		for k := range c.parseErrors {
			t.ParseErrors[k] += c.parseErrors[k].Load()
		}
	}
	return t
}
