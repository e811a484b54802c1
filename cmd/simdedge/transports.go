package main

import (
	"sync"

	"github.com/simdedge/simdedge/rdma"
	"github.com/simdedge/simdedge/server/admin"
	"github.com/simdedge/simdedge/xdp"
)

// openTransports are the xdp and rdma listeners open now, whose own
// counters the admin listener publishes (admin.Options.Transports): the
// listeners register when opened and leave when closed.
var openTransports struct {
	mu   sync.Mutex
	next int
	m    map[int]func([]admin.TransportStat) []admin.TransportStat
}

// addTransport registers a listener's stats; the returned func removes it.
func addTransport(stats func([]admin.TransportStat) []admin.TransportStat) (remove func()) {
	t := &openTransports
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m == nil {
		t.m = map[int]func([]admin.TransportStat) []admin.TransportStat{}
	}
	t.next++
	id := t.next
	t.m[id] = stats
	return func() {
		t.mu.Lock()
		delete(t.m, id)
		t.mu.Unlock()
	}
}

// transportStats gathers every open transport's counters (a scrape).
func transportStats() []admin.TransportStat {
	t := &openTransports
	t.mu.Lock()
	fns := make([]func([]admin.TransportStat) []admin.TransportStat, 0, len(t.m))
	for _, f := range t.m {
		fns = append(fns, f)
	}
	t.mu.Unlock()
	var out []admin.TransportStat
	for _, f := range fns {
		out = f(out)
	}
	return out
}

// xdpStats are an AF_XDP listener's counters: the steering program's
// verdicts and the sockets' frames.
func xdpStats(l *xdp.Listener, name string) func([]admin.TransportStat) []admin.TransportStat {
	return func(out []admin.TransportStat) []admin.TransportStat {
		s, _ := l.Stats() // a failed map read leaves the program's counts 0
		for _, e := range []struct {
			name string
			v    uint64
		}{
			{"steered", s.Program.Steered}, {"passed", s.Program.Passed}, {"fallback", s.Program.Fallback},
			{"program_dropped", s.Program.Dropped}, {"received", s.Received}, {"stream", s.Stream},
			{"datagrams", s.Datagrams}, {"dropped", s.Dropped}, {"sent", s.Sent}, {"tx_full", s.TXFull},
			{"rx_dropped", s.RXDropped}, {"rx_ring_full", s.RXRingFull}, {"fill_empty", s.FillEmpty},
		} {
			out = append(out, admin.TransportStat{Transport: "xdp", Listener: name, Name: e.name, Value: e.v})
		}
		return out
	}
}

// rdmaStats are an RDMA listener's counts: connections accepted and
// requests served inline (counters), connections open, receive credits
// held by messages being served and messages queued (gauges).
func rdmaStats(ml *rdma.MessageListener, name string) func([]admin.TransportStat) []admin.TransportStat {
	return func(out []admin.TransportStat) []admin.TransportStat {
		s := ml.Stats()
		return append(out,
			admin.TransportStat{Transport: "rdma", Listener: name, Name: "accepted", Value: uint64(s.Accepted)},
			admin.TransportStat{Transport: "rdma", Listener: name, Name: "inlined", Value: uint64(s.Inlined)},
			admin.TransportStat{Transport: "rdma", Listener: name, Name: "connections", Value: uint64(s.Connected), Gauge: true},
			admin.TransportStat{Transport: "rdma", Listener: name, Name: "credits_held", Value: uint64(s.Held), Gauge: true},
			admin.TransportStat{Transport: "rdma", Listener: name, Name: "queued", Value: uint64(s.Queued), Gauge: true},
		)
	}
}

// closerFunc adapts a func to io.Closer.
type closerFunc func() error

func (f closerFunc) Close() error { return f() }
