package metrics

import (
	"sort"
	"sync/atomic"
)

// Refusal reasons: why a connection was closed unserved.
const (
	RefusedPerIP    = iota // over limits.max_conns_per_ip
	RefusedMaxConns        // no slot under limits.max_conns
	RefusalKinds
)

// RefusalNames are the label values of the refusal reasons.
var RefusalNames = [RefusalKinds]string{"per_ip", "max_conns"}

// TLS handshake outcomes.
const (
	TLSOK        = iota // handshake completed
	TLSFailed           // handshake failed (bad client hello, no common suite, timeout, reset)
	TLSPlainHTTP        // plain HTTP on a TLS listener (answered 400 in clear)
	TLSNotTLS           // neither TLS nor HTTP
	TLSKinds
)

// TLSNames are the label values of the handshake outcomes.
var TLSNames = [TLSKinds]string{"ok", "failed", "plain_http", "not_tls"}

// HTTP/2 events on a listener.
const (
	H2Conn   = iota // a connection began HTTP/2 (h2c preface or ALPN h2)
	H2Stream        // a stream opened (a request began)
	H2Reset         // a stream reset by the client or refused by the server
	H2Kinds
)

// HTTP/3 events on a listener.
const (
	H3Conn   = iota // a QUIC connection completed its handshake
	H3Stream        // a request stream began (its HEADERS arrived)
	H3Error         // a stream or connection ended in a protocol error or was refused
	H3Retry         // a Retry asked a client to prove its address (RFC 9000 §8.1.2)
	H3Kinds
)

// listenerCounters is one shard of a listener's counters.
type listenerCounters struct {
	opened, closed atomic.Uint64
	refused        [RefusalKinds]atomic.Uint64
	parseErrors    [ParseKinds]atomic.Uint64
	tls            [TLSKinds]atomic.Uint64
	h2             [H2Kinds]atomic.Uint64
	h3             [H3Kinds]atomic.Uint64
}

type listenerShard struct {
	listenerCounters
	_ [cacheLine - listenerCountersSize%cacheLine]byte
}

const listenerCountersSize = 8 * (2 + RefusalKinds + ParseKinds + TLSKinds + H2Kinds + H3Kinds)

// Listener is one listener's connection counters (all the sockets of one
// address: `loops: N` share them). Its methods accept a nil Listener
// (metrics off) and then count nothing.
type Listener struct {
	name   string
	shards []listenerShard
	// slot is the listener's index in the routes' per-listener request
	// counters (ListenerSlots).
	slot int
}

// Listener returns the counters of the listener named name (its address),
// creating them on first use; nil on a nil Set. Called when a listener
// starts serving, never per connection.
func (s *Set) Listener(name string) *Listener {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.listeners[name]
	if l == nil {
		l = &Listener{name: name, shards: make([]listenerShard, s.mask+1), slot: min(len(s.listeners), ListenerSlots-1)}
		s.listeners[name] = l
		if l.slot < ListenerSlots-1 {
			s.slotNames[l.slot] = name
		}
	}
	return l
}

// Listeners returns the listeners counted so far, in name order.
func (s *Set) Listeners() []*Listener {
	s.mu.Lock()
	out := make([]*Listener, 0, len(s.listeners))
	for _, l := range s.listeners {
		out = append(out, l)
	}
	s.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// Name is the listener's label value.
func (l *Listener) Name() string { return l.name }

func (l *Listener) shard(i int) *listenerCounters {
	return &l.shards[i&(len(l.shards)-1)].listenerCounters
}

// Opened counts an accepted connection.
func (l *Listener) Opened(shard int) {
	if l != nil {
		l.shard(shard).opened.Add(1)
	}
}

// Closed counts a connection's end.
func (l *Listener) Closed(shard int) {
	if l != nil {
		l.shard(shard).closed.Add(1)
	}
}

// Refused counts a connection closed unserved for reason (RefusedPerIP...).
func (l *Listener) Refused(shard, reason int) {
	if l != nil {
		l.shard(shard).refused[reason].Add(1)
	}
}

// TLSHandshake counts a TLS handshake's outcome (TLSOK...).
func (l *Listener) TLSHandshake(shard, outcome int) {
	if l != nil {
		l.shard(shard).tls[outcome].Add(1)
	}
}

// HTTP2 counts an HTTP/2 event (H2Conn...).
func (l *Listener) HTTP2(shard, event int) {
	if l != nil {
		l.shard(shard).h2[event].Add(1)
	}
}

// HTTP3 counts an HTTP/3 event (H3Conn...).
func (l *Listener) HTTP3(shard, event int) {
	if l != nil {
		l.shard(shard).h3[event].Add(1)
	}
}

// Slot is the listener's index in the routes' request counters; 0 for a
// nil Listener.
func (l *Listener) Slot() int {
	if l == nil {
		return 0
	}
	return l.slot
}

// ParseError counts a request answered with status before any handler
// ran (malformed, too large, unsupported, too slow).
func (l *Listener) ParseError(shard, status int) {
	if l != nil {
		l.shard(shard).parseErrors[ParseStatusIndex(status)].Add(1)
	}
}

// ListenerTotals are a listener's counters summed over the shards.
type ListenerTotals struct {
	Opened, Closed uint64
	Refused        [RefusalKinds]uint64
	ParseErrors    [ParseKinds]uint64
	TLS            [TLSKinds]uint64
	HTTP2          [H2Kinds]uint64
	HTTP3          [H3Kinds]uint64
}

// Active is the number of open connections.
func (t ListenerTotals) Active() uint64 {
	if t.Closed > t.Opened { // shards read at different instants
		return 0
	}
	return t.Opened - t.Closed
}

// Totals sums the shards.
func (l *Listener) Totals() ListenerTotals {
	var t ListenerTotals
	for i := range l.shards {
		c := &l.shards[i]
		t.Opened += c.opened.Load()
		t.Closed += c.closed.Load()
		for k := range c.refused {
			t.Refused[k] += c.refused[k].Load()
		}
		for k := range c.parseErrors {
			t.ParseErrors[k] += c.parseErrors[k].Load()
		}
		for k := range c.tls {
			t.TLS[k] += c.tls[k].Load()
		}
		for k := range c.h2 {
			t.HTTP2[k] += c.h2[k].Load()
		}
		for k := range c.h3 {
			t.HTTP3[k] += c.h3[k].Load()
		}
	}
	return t
}
